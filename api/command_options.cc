#include "api/command_options.h"

namespace easyplan::api {

ActivationOptions CommandOptions::Activations() const {
  ActivationOptions options = attention;
  options.mode = memory.mode;
  options.batch = memory.batch;
  options.seq = memory.seq;
  return options;
}

ValidateOptions CommandOptions::Validate() const {
  ValidateOptions options;
  options.plan = plan;
  options.step = memory;
  return options;
}

CostOptions CommandOptions::Cost() const {
  CostOptions options;
  options.plan = plan;
  options.memory = memory;
  options.pricing = pricing;
  return options;
}

ReportOptions CommandOptions::Report() const {
  ReportOptions options;
  options.plan = plan;
  SetReportStep(memory, options);
  options.pricing = pricing;
  return options;
}

SuggestOptions CommandOptions::Suggest() const {
  SuggestOptions options;
  options.plan = plan;
  options.memory = memory;
  options.slices = slices;
  options.top = top;
  options.max_microbatches = max_microbatches;
  options.max_pp = max_pp;
  options.max_tpot_ms = max_tpot_ms;
  options.pricing = pricing;
  options.pricing.microbatches = PricingOptions().microbatches;  // suggest searches it
  options.rules = rule_files;
  if (given.count("pp_schedule") > 0) options.pp_schedule = plan.pipeline.schedule;
  if (given.count("virtual_stages") > 0) options.virtual_stages = plan.pipeline.virtual_stages;
  // The schedule options are suggest's own (above), for its pipelined candidates; the plan's pipeline
  // group keeps only --pp-layers, which CheckSuggestOptions refuses.
  options.plan.pipeline.schedule = PipelineOptions().schedule;
  options.plan.pipeline.virtual_stages = PipelineOptions().virtual_stages;
  return options;
}

CheckOptions CommandOptions::Check() const {
  CheckOptions options;
  options.plan = plan;
  options.level = level;
  options.seed = seed;
  options.inject = inject;
  options.max_numeric_devices = max_numeric_devices;
  options.memory = check_memory;
  options.engine = engine;
  options.mpi_timeout_seconds = mpi_timeout_seconds;
  options.mpi_start_timeout_seconds = mpi_start_timeout_seconds;
  return options;
}

ExportOptions CommandOptions::Export() const {
  ExportOptions options;
  options.plan = plan;
  // Not given, the layout follows the format (hf for the torch formats): ExportOptions::layout_given.
  options.layout_given = Given("layout");
  if (!options.layout_given) options.plan.tree.layout = TreeOptions().layout;
  options.to = to;
  options.format = export_format;
  options.batch = memory.batch;
  options.seq = memory.seq;
  if (Given("microbatches")) options.microbatches = pricing.microbatches;
  return options;
}

}  // namespace easyplan::api
