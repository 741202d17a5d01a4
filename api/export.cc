#include "api/export.h"

#include "api/choices.h"
#include "api/option_checks.h"
#include "api/plan_inputs.h"
#include "api/plan_pipeline.h"
#include "planner/export.h"
#include "planner/export_dtensor.h"
#include "planner/runtime_vocabulary.h"
#include "schemas/model_dims.h"

namespace easyplan::api {
namespace {

struct Format {
  const planner::ExportFormatInfo* info = nullptr;
  planner::ExportOptions options;
};

StatusOr<Format> FormatOf(const ExportOptions& options) {
  Format format;
  EP_ASSIGN_OR_RETURN(format.info, planner::FindExportFormat(options.to));
  EP_RETURN_IF_ERROR(CheckOptionValue("export_format", Json(options.format)));
  format.options.json = options.format == "json";
  format.options.step = {.batch = options.batch, .seq = options.seq, .microbatches = options.microbatches};
  for (const auto& [name, value] : {std::pair{"batch", options.batch}, std::pair{"seq", options.seq},
                                    std::pair{"microbatches", options.microbatches}}) {
    if (value) EP_RETURN_IF_ERROR(CheckOptionValue(name, Json(*value)));
  }
  EP_RETURN_IF_ERROR(planner::CheckExportOptions(*format.info, format.options));
  return format;
}

}  // namespace

Status CheckExportOptions(const ExportOptions& options) {
  EP_RETURN_IF_ERROR(CheckPlanOptions(options.plan));
  return FormatOf(options).status();
}

StatusOr<ExportResult> Export(const std::shared_ptr<const Model>& model, const ExportOptions& options) {
  EP_ASSIGN_OR_RETURN(const Checked<ExportOptions> checked, Checked<ExportOptions>::Of(options));
  return Export(model, checked);
}

StatusOr<ExportResult> Export(const std::shared_ptr<const Model>& model, const Checked<ExportOptions>& checked) {
  const ExportOptions& options = *checked;
  // The format as CheckExportOptions parsed it.
  EP_ASSIGN_OR_RETURN(const Format format, FormatOf(options));
  // Edits the plan's checks accept by construction: "hf" is a --layout choice, and --microbatches was
  // checked with the export's options.
  const Checked<PlanOptions> plan_options = checked.PartOf(&ExportOptions::plan).Edited([&](PlanOptions& p) {
    // DTensor placements and tp_plans are about HF (torch) tensors: plan the HF names unless told otherwise.
    if (format.info->hf_names && !options.layout_given && p.tree.file.empty() && !p.tree.given) p.tree.layout = "hf";
    // The plan's microbatch finding checks --microbatches against the pipeline's schedule.
    p.pipeline.microbatches = options.microbatches;
  });
  EP_ASSIGN_OR_RETURN(PlanInputs inputs, PreparePlan(model, plan_options));
  EP_RETURN_IF_ERROR(planner::CheckExportTree(*format.info, *inputs.tree));
  EP_RETURN_IF_ERROR(planner::CheckExportPipeline(*format.info, inputs.pipeline));
  ExportResult result;
  EP_ASSIGN_OR_RETURN(planner::Plan plan, inputs.Build());
  result.findings = plan.findings;
  if (plan.HasErrors()) {
    result.failed = true;
    return result;
  }
  const Limits& limits = model->env().limits;
  const std::string what = "the " + std::string(format.info->name) + " export";
  if (format.info->format == planner::ExportFormat::kTorch) {
    // Devices x tensors: refused before anything is built.
    EP_RETURN_IF_ERROR(
        CheckOutputSize(what, planner::TorchExportSizeEstimate(plan, *inputs.tree), /*estimated=*/true, limits));
  }
  const planner::ActivationTable* table = nullptr;
  if (format.info->needs_activation_table) {
    EP_ASSIGN_OR_RETURN(table, model->ActivationTable());
  }
  std::optional<planner::RuntimeVocabulary> vocabulary;
  if (!format.info->vocabulary.empty()) {
    EP_ASSIGN_OR_RETURN(const Document doc, model->env().Data().ReadDocument(std::string(format.info->vocabulary)));
    EP_ASSIGN_OR_RETURN(vocabulary, planner::ParseRuntimeVocabulary(doc));
  }
  planner::RuntimeModel runtime_model;
  if (inputs.has_config()) {
    if (StatusOr<schemas::ModelDims> dims = schemas::ModelDimsOf(inputs.resolved()); dims.ok()) {
      runtime_model.experts = dims->experts;
      runtime_model.first_dense_layers = dims->first_dense_layers;
    }
  }
  PlanResult planned{std::move(inputs), std::move(plan), std::nullopt};
  planner::ExportInputs export_inputs{.plan = &planned.plan,
                                      .tree = planned.inputs.tree.get(),
                                      .rules = planned.inputs.rules,
                                      .presets = planned.inputs.presets,
                                      .config = &model->config(),
                                      .geometry = &model->resolved().geometry,
                                      .dim_keys = &model->resolved().dim_keys,
                                      .activation_table = table,
                                      .model = runtime_model,
                                      .vocabulary = vocabulary ? &*vocabulary : nullptr,
                                      .easydel_version = model->easydel_version().name};
  export_inputs.plan_json = [&]() -> StatusOr<std::string> {
    EP_ASSIGN_OR_RETURN(planned.experts, ExpertReportForPlan(planned.inputs));
    return PlanResultToJsonText(planned);
  };
  EP_ASSIGN_OR_RETURN(result.text, planner::ExportPlan(format.info->name, export_inputs, format.options));
  EP_RETURN_IF_ERROR(CheckOutputSize(what, result.text.size(), /*estimated=*/false, limits));
  return result;
}

}  // namespace easyplan::api
