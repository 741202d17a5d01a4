#include "api/cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "api/choices.h"
#include "api/context_length.h"
#include "api/findings_json.h"
#include "api/forward_model.h"
#include "api/memory_json.h"
#include "api/memory_pipeline.h"
#include "api/option_checks.h"
#include "api/pipeline_timeline.h"
#include "api/plan_json.h"
#include "api/topology_lines.h"
#include "core/checked_math.h"
#include "core/number_literal.h"
#include "kernels/dry_run.h"
#include "kernels/step_records.h"
#include "step/estimate.h"
#include "step/matmul_tiling.h"
#include "step/pipeline_step.h"

namespace easyplan::api {
namespace {

// The token and position tables of the model's forward structure: lookups, not matmuls.
bool IsEmbeddingLookup(const kernels::ModelDesc& d, const std::string& name) {
  const schemas::ForwardStructure& f = d.forward;
  return name == d.Param(f.embedding) || (!f.positions.empty() && name == d.Param(f.positions));
}

// A stacked routed-expert tensor: under a layer's MoE block, in the experts' module (the down kernel's).
bool IsRoutedExpert(const kernels::ModelDesc& d, const std::string& name) {
  const schemas::ForwardStructure::Moe& moe = d.forward.moe;
  const std::string layers = d.Param(d.forward.layers) + "/";
  if (moe.block.empty() || !name.starts_with(layers)) return false;
  // The name under its layer: "<i>/<block>/<expert kernel>" plus "/kernel", a "_bias" suffix, or nothing
  // (an ArrayParam); a per-expert module's "{e}" stands for the expert's index.
  const size_t slash = name.find('/', layers.size());
  if (slash == std::string::npos) return false;
  const std::string_view rest = std::string_view(name).substr(slash + 1);
  for (const std::string* kernel : {&moe.gate, &moe.up, &moe.down, &moe.gate_up}) {
    if (kernel->empty()) continue;
    const std::string stem = moe.block + "/" + *kernel;
    const size_t at = stem.find("{e}");
    std::string_view tail = rest;
    if (at != std::string::npos) {
      if (!tail.starts_with(stem.substr(0, at))) continue;
      tail.remove_prefix(at);
      const size_t digits = tail.find_first_not_of("0123456789");
      if (digits == 0 || digits == std::string_view::npos) continue;
      tail.remove_prefix(digits);
      if (!tail.starts_with(stem.substr(at + 3))) continue;
      tail.remove_prefix(stem.size() - at - 3);
    } else {
      if (!tail.starts_with(stem)) continue;
      tail.remove_prefix(stem.size());
    }
    if (tail.empty() || tail.starts_with("/") || tail.starts_with("_")) return true;
  }
  return false;
}

}  // namespace

Json AxisSizesJson(const std::vector<std::string>& names, const std::vector<int64_t>& sizes, bool skip_ones) {
  Json out = Json::object();
  for (size_t k = 0; k < names.size() && k < sizes.size(); ++k) {
    if (!skip_ones || sizes[k] > 1) out[names[k]] = sizes[k];
  }
  return out;
}

Json KindBytesJson(const step::KindBytes& bytes) {
  Json out = Json::object();
  out["all_gather"] = bytes.all_gather;
  out["reduce_scatter"] = bytes.reduce_scatter;
  out["all_reduce"] = bytes.all_reduce;
  out["all_to_all"] = bytes.all_to_all;
  return out;
}

std::string PolicyFlagValue(planner::CheckpointPolicy policy) {
  return policy == planner::CheckpointPolicy::kNone ? std::string() : std::string(CheckpointPolicyName(policy));
}

Status CheckCostOptions(const CostOptions& options, const std::string& command) {
  EP_RETURN_IF_ERROR(CheckPlanOptions(options.plan));
  EP_RETURN_IF_ERROR(CheckMemoryOptions(options.memory, command));
  if (options.memory.hardware.empty()) {
    return Status::BadInput({}, "--hardware is required: the step is priced on an accelerator's figures",
                            {"e.g. --hardware h100-sxm, --hardware tpu-v5p, or a profile file (docs/COST.md)"});
  }
  EP_RETURN_IF_ERROR(CheckStepPricing(options.memory, options.pricing));
  if (!options.plan.tree.file.empty() || !options.plan.tree.checkpoint.empty() ||
      options.plan.tree.layout != "easydel") {
    return Status::BadInput({},
                            "cost runs the family's forward pass on its EasyDeL tree: --tree, --from and "
                            "--layout hf do not apply",
                            {"plan, validate and memory take them"});
  }
  return Status();
}

Status CheckStepPricing(const MemoryOptions& memory, const PricingOptions& pricing) {
  // Each option as the command table declares its check (api/option_table.cc); then how they combine.
  EP_RETURN_IF_ERROR(CheckOptionValue("microbatches", Json(pricing.microbatches)));
  EP_RETURN_IF_ERROR(CheckOptionValue("decode", Json(pricing.decode)));
  EP_RETURN_IF_ERROR(CheckMicrobatchesNeedTraining(pricing.microbatches, memory.mode));
  if (*memory.batch % pricing.microbatches != 0) {
    return Status::BadInput(
        {}, fmt::format("--batch {} is not divisible by --microbatches {}", *memory.batch, pricing.microbatches),
        {"each microbatch is an equal share of the global batch"});
  }
  EP_RETURN_IF_ERROR(CheckOptionValue("precision", Json(pricing.precision)));
  return ParseTorus(pricing.torus).status();
}

step::Precision PrecisionOf(const PricingOptions& pricing) {
  return step::ParsePrecision(pricing.precision).value_or(step::Precision::kBf16);
}

Status CheckTorusOn(const std::vector<int64_t>& torus, const step::HardwareProfile& hardware) {
  if (torus.empty() || (hardware.fast.kind == "ici" && !hardware.fast.torus.empty())) return Status();
  return Status::BadInput({},
                          "--torus: hardware profile '" + hardware.name + "' has no torus (its fast links are " +
                              hardware.fast.kind + ", a switch)",
                          {"--torus gives a TPU slice's dims; drop it, or price a TPU profile"});
}

StatusOr<std::vector<int64_t>> ParseTorus(const std::string& text) {
  // At most 4 dims of at most 999,999 chips: a torus dim is a handful of chips, and no product overflows.
  std::optional<std::vector<int64_t>> dims = ParseDecimalList(text, 'x');
  const auto dim_ok = [](int64_t d) { return d >= 1 && d <= 999'999; };
  if (!dims || dims->size() > 4 || !std::all_of(dims->begin(), dims->end(), dim_ok)) {
    return Status::BadInput({}, "--torus " + text + ": expected the slice's torus dims joined by 'x', e.g. 4x4x8",
                            {"the dims Cloud TPU lists as the slice's topology, as gcloud takes them"});
  }
  return *std::move(dims);
}

Status CheckPrecisionOn(step::Precision precision, const step::HardwareProfile& hardware) {
  if (precision != step::Precision::kFp8 || hardware.peak_flops_fp8.value_or(0) > 0) return Status();
  return Status::BadInput(
      {hardware.source},
      "--precision fp8: hardware profile '" + hardware.name + "' has no fp8 matmuls (no peak_flops_fp8)",
      {"price it in bf16 (--precision bf16), or use a profile with peak_flops_fp8"});
}

StatusOr<StepModel> StepModelOf(const PlanInputs& inputs, const planner::Plan& plan) {
  StepModel model;
  EP_ASSIGN_OR_RETURN(model.desc, FullModelDesc(*inputs.model, *inputs.tree, plan, 1, 1));
  const kernels::ModelDesc& d = model.desc;
  int64_t active = 0;
  for (const TensorEntry& t : inputs.tree->tensors) {
    if (t.role != TensorRole::kParameter || t.shape.rank() < 2) continue;  // norms and biases are no matmul
    const int64_t elements = t.shape.NumElements().value_or(0);
    // Tied: the head variable EasyDeL may still hold is unused; the embedding serves as the head.
    if (d.tied_embeddings && t.name == d.Param(d.forward.head)) continue;
    if (IsEmbeddingLookup(d, t.name)) {
      if (d.tied_embeddings && t.name == d.Param(d.forward.embedding)) active += elements;  // lm_head
      continue;
    }
    if (IsRoutedExpert(d, t.name) && d.experts > 0 && d.top_k > 0) {
      active += elements / d.experts * d.top_k;
      continue;
    }
    active += elements;
  }
  model.active_params = active;
  model.flash_attention = inputs.config().value("attn_mechanism", std::string()) != "vanilla";
  return model;
}

MemoryOptions StepMemoryOptions(const MemoryOptions& memory, const StepSettings& s) {
  MemoryOptions step = memory;
  step.mode = std::string(ModeName(s.mode));
  step.batch = s.batch / std::max<int64_t>(1, s.microbatches);
  step.seq = s.seq;
  step.microbatches = std::max<int64_t>(1, s.microbatches);
  return step;
}

StatusOr<kernels::DryRunReport> DryRunStep(const PlanInputs& inputs, const planner::Plan& plan, const StepModel& model,
                                           const StepSettings& s) {
  return kernels::DryRunForward(step::MicrobatchModel(model, s), plan, *inputs.tree);
}

StatusOr<kernels::DryRunReport> WithStepRecords(const PlanInputs& inputs, const planner::Plan& plan,
                                                const StepModel& model, const MemoryOptions& memory,
                                                const StepSettings& s, kernels::DryRunReport forward) {
  kernels::StepRecordOptions records;
  records.train = s.mode == Mode::kTrain;
  records.gradient_bytes_per_element = model.desc.bytes_per_element;
  if (!memory.grad_dtype.empty()) {
    if (std::optional<DType> dtype = ParseDType(memory.grad_dtype))
      records.gradient_bytes_per_element = DTypeBits(*dtype) / 8;
  }
  EP_RETURN_IF_ERROR(kernels::AppendStepRecords(step::MicrobatchModel(model, s), plan, *inputs.tree, records, forward));
  return forward;
}

StatusOr<StepEstimate> EstimateStep(const PlanInputs& inputs, const planner::Plan& plan, const StepModel& model,
                                    const step::HardwareProfile& hardware, const MemoryOptions& memory, int64_t budget,
                                    const StepSettings& s, const planner::MemoryReport* memory_report,
                                    const kernels::DryRunReport* given_run) {
  const bool train = s.mode == Mode::kTrain;
  EP_RETURN_IF_ERROR(CheckTorusOn(s.torus, hardware));
  if (plan.pipeline.pipelined()) {
    // Cost(), Report() and suggest refuse a pipelined serving step before they get here (CheckPricedPipeline).
    if (!train) return Status::BadInput({}, "a pipelined serving step is not priced", {kServingWithPipeline});
    // The bubble comes from the schedule's simulation, whose size is known before it is built.
    EP_RETURN_IF_ERROR(CheckTimelineSize(plan.pipeline, s.microbatches, inputs.model->env().limits));
  }
  planner::MemoryReport step_memory;
  if (memory_report != nullptr) {
    step_memory = *memory_report;
  } else {
    EP_ASSIGN_OR_RETURN(step_memory, BuildMemoryReport(inputs, plan, StepMemoryOptions(memory, s), budget, s.policy));
  }
  std::optional<kernels::DryRunReport> own_run;
  if (given_run == nullptr) {
    StatusOr<kernels::DryRunReport> dry_run = DryRunStep(inputs, plan, model, s);
    if (!dry_run.ok() && s.microbatches > 1) {
      // The dry run sees one microbatch: its "batch 1" is not the --batch the user gave.
      Diag diag = dry_run.status().diag();
      const int64_t sequences = s.batch / s.microbatches;
      diag.notes.push_back(fmt::format("that is one microbatch: --batch {} / --microbatches {} = {} sequence{}",
                                       s.batch, s.microbatches, sequences, sequences == 1 ? "" : "s"));
      return Status::Error(std::move(diag), dry_run.status().kind());
    }
    EP_ASSIGN_OR_RETURN(kernels::DryRunReport forward, std::move(dry_run));
    EP_ASSIGN_OR_RETURN(own_run, WithStepRecords(inputs, plan, model, memory, s, std::move(forward)));
    given_run = &*own_run;
  }
  const kernels::DryRunReport& run = *given_run;
  EP_ASSIGN_OR_RETURN(StepEstimate estimate, step::EstimateStep(run, plan, model, hardware, s, std::move(step_memory)));
  if (estimate.step.slice) estimate.topology = TopologyLines(*estimate.step.slice, plan.mesh, hardware);
  return estimate;
}

StatusOr<CostResult> Cost(const std::shared_ptr<const Model>& model, const CostOptions& options) {
  EP_ASSIGN_OR_RETURN(const Checked<CostOptions> checked, Checked<CostOptions>::Of(options));
  return Cost(model, checked);
}

StatusOr<CostResult> Cost(const std::shared_ptr<const Model>& model, const Checked<CostOptions>& checked) {
  const CostOptions& options = *checked;
  EP_RETURN_IF_ERROR(CheckStepMicrobatches("--microbatches", options.pricing.microbatches, model->env().limits));
  std::string budget_label;
  EP_ASSIGN_OR_RETURN(const int64_t budget, MemoryBudget(*model, options.memory, &budget_label));
  EP_ASSIGN_OR_RETURN(const step::HardwareProfile* hardware, model->Hardware(options.memory.hardware));
  EP_ASSIGN_OR_RETURN(PlanInputs inputs, PreparePlan(model, checked.PartOf(&CostOptions::plan)));
  if (!inputs.has_config()) return Status::BadInput({}, "cost needs CONFIG: the forward pass comes from the config");
  // Before the schedule's microbatch check, whose hint (more --microbatches) a serving step cannot take.
  EP_RETURN_IF_ERROR(CheckPricedPipeline("cost", options.memory.mode, inputs.pipeline.stages));
  StepSettings settings;
  settings.mode = MemoryModeOf(options.memory.mode);
  settings.batch = *options.memory.batch;
  settings.seq = *options.memory.seq;
  settings.microbatches = options.pricing.microbatches;
  settings.precision = PrecisionOf(options.pricing);
  EP_ASSIGN_OR_RETURN(settings.torus, ParseTorus(options.pricing.torus));
  EP_RETURN_IF_ERROR(CheckPrecisionOn(settings.precision, *hardware));
  if (settings.mode == Mode::kTrain) {
    EP_ASSIGN_OR_RETURN(settings.policy, ConfigCheckpointPolicy(inputs.config()));
  }
  EP_RETURN_IF_ERROR(planner::CheckMicrobatches(inputs.pipeline, settings.microbatches));
  // Past a learned position table: exit 2 before anything is priced. Past a rotary bound: a finding, added
  // once the step is priced (a plan's errors would otherwise excuse an estimate that fails, an overflow).
  EP_ASSIGN_OR_RETURN(const std::vector<planner::Finding> context, ContextLengthFindings(inputs, options.memory));
  EP_ASSIGN_OR_RETURN(planner::Plan plan, inputs.Build());
  CostResult result{std::move(inputs),
                    std::move(plan),
                    settings,
                    hardware,
                    std::move(budget_label),
                    std::nullopt,
                    step::MatmulEfficiencyAssumption(*hardware, false),
                    step::MatmulEfficiencyAssumption(*hardware, true)};
  EP_ASSIGN_OR_RETURN(result.estimate,
                      EstimateLaidOutPlan(result.inputs, result.plan, *hardware, options.memory, budget, settings));
  result.plan.findings.insert(result.plan.findings.begin(), context.begin(), context.end());
  return result;
}

StatusOr<std::optional<StepEstimate>> EstimateLaidOutPlan(const PlanInputs& inputs, const planner::Plan& plan,
                                                          const step::HardwareProfile& hardware,
                                                          const MemoryOptions& memory, int64_t budget,
                                                          const StepSettings& settings,
                                                          const planner::MemoryReport* memory_report) {
  // A plan with errors is priced as it can be laid out, its findings alongside; if its layout cannot
  // be priced at all, the findings alone answer.
  auto estimate = [&]() -> StatusOr<StepEstimate> {
    EP_ASSIGN_OR_RETURN(const StepModel step_model, StepModelOf(inputs, plan));
    return EstimateStep(inputs, plan, step_model, hardware, memory, budget, settings, memory_report);
  }();
  if (estimate.ok()) return std::optional<StepEstimate>(std::move(*estimate));
  if (plan.HasErrors()) return std::optional<StepEstimate>();
  return estimate.status();
}

Json PipelineStepJson(const step::PipelineStep& p, const planner::PipelineSplit& split) {
  Json out = PipelineSplitJson(split);
  out["microbatches"] = p.microbatches;
  out["slowest_stage"] = p.slowest;
  out["bubble_s"] = p.bubble_s;
  out["bubble_fraction"] = p.bubble_fraction;
  out["bubble_free_step_s"] = p.bubble_free_s;
  Json pace = Json::object();
  pace["forward_s"] = p.pace.forward;
  pace["backward_input_s"] = p.pace.backward_input;
  pace["backward_weight_s"] = p.pace.backward_weight;
  out["pace"] = std::move(pace);
  Json send = Json::object();
  send["bytes_per_device"] = p.send_bytes;
  send["per_microbatch_each_way"] = p.sends_per_microbatch;
  send["link"] = p.send_link;
  send["seconds"] = p.send_s;
  out["send"] = std::move(send);
  out["exposed_parameter_s"] = p.exposed_parameter_s;
  out["exposed_gradient_sync_s"] = p.exposed_gradient_s;
  out["optimizer_update_s"] = p.update_s;
  Json stages = Json::array();
  for (const step::StageStep& s : p.stages) {
    Json stage = Json::object();
    stage["stage"] = s.stage;
    stage["layers"] = s.layers;
    stage["microbatch_s"] = s.microbatch_s;
    stage["forward_s"] = s.cost.microbatch.forward_s;
    stage["backward_s"] = s.cost.microbatch.backward_s;
    stage["gradient_sync_s"] = s.cost.gradient_sync_s;
    stages.push_back(std::move(stage));
  }
  out["per_stage"] = std::move(stages);
  return out;
}

Json LayerCostsJson(const step::StepCost& step) {
  Json out = Json::array();
  for (const step::LayerCost& layer : step.layers) {
    Json item = Json::object();
    item["scope"] = layer.scope;
    item["count"] = layer.count;
    item["compute_s"] = layer.compute_s;
    item["communication_s"] = layer.communication_s;
    out.push_back(std::move(item));
  }
  return out;
}

Json CostToJson(const CostResult& r) {
  Json out = Json::object();
  const Mesh& mesh = r.plan.mesh;
  out["model_type"] = r.inputs.model->model_type();
  out["easydel_version"] = r.inputs.model->easydel_version().name;
  out["mesh"] = AxisSizesJson(mesh.axis_names, mesh.shape);
  out["dcn"] = AxisSizesJson(mesh.axis_names, mesh.dcn_shape, /*skip_ones=*/true);
  out["devices"] = mesh.NumDevices();
  out["hardware"] = r.hardware != nullptr ? r.hardware->name : std::string();
  out["mode"] = std::string(ModeName(r.settings.mode));
  out["decode"] = r.settings.decode();
  out["precision"] = step::PrecisionName(r.settings.precision);
  out["batch"] = r.settings.batch;
  out["seq"] = r.settings.seq;
  out["microbatches"] = r.settings.microbatches;
  out["gradient_checkpointing"] = PolicyFlagValue(r.settings.policy);
  if (r.estimate) {
    const StepEstimate& e = *r.estimate;
    const step::StepCost& c = e.step;
    out["step_time_s"] = c.step_time_s;
    out["tokens_per_s"] = e.tokens_per_s;
    out["tokens_per_s_per_device"] = e.tokens_per_s_per_device;
    out["mfu"] = e.mfu;
    out["mfu_convention"] = kMfuConvention;
    out["mfu_peak"] = step::PrecisionName(e.mfu_peak);
    if (r.settings.mode == Mode::kDecode) {
      out["tpot_s"] = c.step_time_s;
    } else if (r.settings.mode != Mode::kTrain) {
      out["ttft_s"] = c.step_time_s;
    }
    out["active_params"] = e.active_params;
    out["model_flops"] = e.model_flops;
    out["compute_s"] = c.compute_s;
    out["recompute_s"] = c.recompute_s;
    out["memory_bound_s"] = c.memory_bound_s;
    out["optimizer_update_s"] = c.update_s;
    out["attention_causal_share"] = c.attention_causal_share;
    out["communication_s"] = c.communication_s;
    out["exposed_communication_s"] = c.exposed_communication_s;
    if (!e.topology.empty()) out["topology"] = e.topology;  // a TPU slice's torus: cost's "assumed" lines
    out["fits"] = e.fits;
    out["memory"] = DeviceMemoryToJson(e.memory.Worst());
    // The budget, named for what it is (issue 46); its old key stays for a while, said so in the output.
    out["budget_per_device"] = e.memory.budget_per_device;
    out["memory_per_device"] = e.memory.budget_per_device;
    out["deprecated_keys"] = Json{{"memory_per_device", kMemoryPerDeviceRenamed}};
    Json forward = Json::object();
    forward["flops"] = c.forward_flops;
    forward["communication"] = KindBytesJson(c.forward);
    out["forward"] = std::move(forward);
    Json backward = Json::object();
    backward["communication"] = KindBytesJson(c.backward);
    out["backward"] = std::move(backward);
    out["step_flops"] = c.step_flops;
    Json collectives = Json::array();
    for (const step::PricedCollective& p : c.collectives) {
      Json item = Json::object();
      item["phase"] = p.phase;
      item["scope"] = p.scope;
      item["op"] = p.op;
      item["kind"] = std::string(kernels::CollectiveName(p.kind));
      item["axes"] = p.axes;
      item["group"] = p.group;
      item["count"] = p.count;
      item["bytes_per_device"] = p.bytes_per_device;
      item["link"] = p.link;
      item["seconds"] = p.seconds;
      item["overlapped"] = p.overlapped;
      collectives.push_back(std::move(item));
    }
    out["collectives"] = std::move(collectives);
    out["layers"] = LayerCostsJson(c);
    if (e.pipeline) out["pipeline"] = PipelineStepJson(*e.pipeline, r.plan.pipeline);
  }
  out["findings"] = FindingsJsonArray(r.plan.findings);
  return out;
}

}  // namespace easyplan::api
