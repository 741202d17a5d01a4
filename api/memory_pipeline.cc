#include "api/memory_pipeline.h"

#include <fmt/format.h>

#include <memory>

#include "api/activation_pipeline.h"
#include "api/choices.h"
#include "api/context_length.h"
#include "api/forward_model.h"
#include "api/hardware.h"
#include "api/option_checks.h"
#include "core/byte_size.h"
#include "core/did_you_mean.h"
#include "core/dtype.h"
#include "core/human.h"
#include "schemas/model_dims.h"

namespace easyplan::api {

bool HasStepStateOptions(const MemoryOptions& options) {
  const MemoryOptions defaults;
  return options.max_length.has_value() || options.optimizer != defaults.optimizer || !options.grad_dtype.empty() ||
         options.opt_state_dtype != defaults.opt_state_dtype || options.master_weights;
}

Mode MemoryModeOf(const std::string& mode) {
  if (mode == "train") return Mode::kTrain;
  if (mode == "prefill") return Mode::kPrefill;
  return Mode::kDecode;  // CheckMemoryOptions took train, prefill or decode
}

Status CheckMicrobatchesNeedTraining(int64_t microbatches, const std::string& mode) {
  if (microbatches <= 1 || mode == "train") return Status();
  return Status::BadInput({}, "--microbatches accumulates gradients: it needs --mode train", {kServingWithPipeline});
}

Status CheckPricedPipeline(const std::string& command, const std::string& mode, int64_t stages) {
  if (stages <= 1 || mode == "train") return Status();
  return Status::BadInput(
      {}, fmt::format("{} prices a pipelined training step: --mode {} with pp={} is not priced", command, mode, stages),
      {kServingWithPipeline, "drop pp from --mesh to price the serving step on the other axes"});
}

Status CheckMemoryOptions(const MemoryOptions& options, const std::string& command) {
  // Each option as the command table declares its check (api/option_table.cc); then how they combine.
  EP_RETURN_IF_ERROR(CheckOptionValue("mode", Json(options.mode), command));
  if (!options.batch || !options.seq) {
    return Status::BadInput({},
                            std::string(options.batch ? "--seq" : "--batch") + " is required: " + command +
                                " sizes the activations of a step of --batch sequences of --seq tokens (decode: "
                                "one new token each against a KV cache of --seq tokens)",
                            {"e.g. --batch 8 --seq 4096"});
  }
  EP_RETURN_IF_ERROR(CheckOptionValue("batch", Json(*options.batch)));
  EP_RETURN_IF_ERROR(CheckOptionValue("seq", Json(*options.seq)));
  if (options.max_length) {
    EP_RETURN_IF_ERROR(CheckOptionValue("max_length", Json(*options.max_length)));
    if (options.mode != "decode") {
      return Status::BadInput(
          {}, "--max-length sizes the KV cache a decode step reads: it needs --mode decode, not --mode " + options.mode,
          {"--mode decode --seq S --max-length L: one new token per sequence against S cached tokens, in a cache "
           "allocated for L"});
    }
    if (*options.max_length < *options.seq) {
      return Status::BadInput({}, "--max-length " + std::to_string(*options.max_length) +
                                      " is shorter than the cache's tokens: expected at least --seq " +
                                      std::to_string(*options.seq));
    }
  }
  EP_RETURN_IF_ERROR(CheckOptionValue("microbatches", Json(options.microbatches), command));
  EP_RETURN_IF_ERROR(CheckMicrobatchesNeedTraining(options.microbatches, options.mode));
  if (*options.batch % options.microbatches != 0) {
    return Status::BadInput({},
                            "--batch " + std::to_string(*options.batch) + " is not divisible by --microbatches " +
                                std::to_string(options.microbatches),
                            {"each microbatch is an equal share of the global batch"});
  }
  EP_RETURN_IF_ERROR(CheckOptionValue("optimizer", Json(options.optimizer)));
  EP_RETURN_IF_ERROR(CheckOptionValue("grad_dtype", Json(options.grad_dtype)));
  return CheckOptionValue("opt_state_dtype", Json(options.opt_state_dtype));
}

StatusOr<int64_t> MemoryBudget(const Model& model, const MemoryOptions& options, std::string* label) {
  if (!options.max_memory.empty()) {
    EP_RETURN_IF_ERROR(CheckOptionValue("max_memory", Json(options.max_memory)));
    EP_ASSIGN_OR_RETURN(int64_t bytes, ParseByteSize(options.max_memory, "--max-memory"));
    *label = options.max_memory;
    return bytes;
  }
  if (options.hardware.empty()) {
    *label = "80GiB";
    return int64_t{80} << 30;
  }
  // A memory-only accelerator of the catalogue gives a budget as well as a full profile does.
  EP_ASSIGN_OR_RETURN(const std::vector<step::HardwareProfile>* kinds, model.DeviceKinds());
  for (const step::HardwareProfile& kind : *kinds) {
    if (kind.name == options.hardware) {
      *label = kind.name + " (" + HumanBytesBinary(kind.hbm_bytes) + ")";
      return kind.hbm_bytes;
    }
  }
  StatusOr<const step::HardwareProfile*> profile = model.Hardware(options.hardware);
  if (!profile.ok() && !IsHardwareFile(options.hardware)) {
    // Neither list has it: one message over both, the closest name of either suggested.
    std::vector<std::string> profiles = HardwareNames(model.env()), devices;
    for (const step::HardwareProfile& kind : *kinds) devices.push_back(kind.name);
    std::vector<std::string> all = profiles;
    all.insert(all.end(), devices.begin(), devices.end());
    std::string message = "--hardware '" + options.hardware + "' is neither a hardware profile nor an accelerator";
    // A prefix names the family ("h100" -> "h100-sxm") better than the nearest spelling ("h200").
    std::optional<std::string> close;
    for (const std::string& name : all) {
      if (!close && name.starts_with(options.hardware)) close = name;
    }
    if (!close) close = SuggestClosest(options.hardware, all);
    if (close) message += " (did you mean '" + *close + "'?)";
    return Status::BadInput({}, message,
                            {"profiles (schemas/hardware/; they also price a step): " + JoinQuoted(profiles),
                             "accelerators by part (schemas/hardware/; each budgets memory): " + JoinQuoted(devices),
                             "or give a profile file (a path with '/' or ending in .yaml; docs/COST.md)"});
  }
  if (!profile.ok()) return profile.status();
  *label = (*profile)->name + " (" + HumanBytesBinary((*profile)->hbm_bytes) + " HBM)";
  return (*profile)->hbm_bytes;
}

StatusOr<planner::CheckpointPolicy> ConfigCheckpointPolicy(const Json& config) {
  const std::string policy = config.value("gradient_checkpointing", std::string());
  std::optional<planner::CheckpointPolicy> parsed = planner::ParseCheckpointPolicy(policy);
  if (!parsed) {
    return Status::BadInput({}, "config: gradient_checkpointing '" + policy + "' is not a policy memory models",
                            {"expected one of \"\" (none), everything_saveable, nothing_saveable, checkpoint_dots "
                             "(dots_saveable), checkpoint_dots_with_no_batch_dims; e.g. --set "
                             "gradient_checkpointing=nothing_saveable"});
  }
  return *parsed;
}

StatusOr<planner::MemoryReport> BuildMemoryReport(const PlanInputs& inputs, const planner::Plan& plan,
                                                  const MemoryOptions& options, int64_t budget,
                                                  std::optional<planner::CheckpointPolicy> policy,
                                                  const StepActivations* activations, bool worst_only,
                                                  const planner::MemoryModel* memory_model) {
  const bool train = options.mode == "train";
  planner::MemoryOptions memory;
  memory.mode = MemoryModeOf(options.mode);
  memory.optimizer = *planner::ParseOptimizer(options.optimizer);
  if (!options.grad_dtype.empty()) memory.grad_dtype = ParseDType(options.grad_dtype);
  memory.opt_state_dtype = *ParseDType(options.opt_state_dtype);
  memory.master_weights = options.master_weights;
  memory.budget_per_device = budget;
  memory.worst_only = worst_only;
  memory.microbatches = options.microbatches;
  const Json& config = inputs.config();
  if (train) {
    if (policy) {
      memory.policy = *policy;
    } else {
      EP_ASSIGN_OR_RETURN(memory.policy, ConfigCheckpointPolicy(config));
    }
  }
  std::optional<planner::MemoryModel> own_model;
  if (memory_model == nullptr) {
    EP_ASSIGN_OR_RETURN(own_model, StepMemoryModel(*inputs.model));
    memory_model = &*own_model;
  }

  std::optional<StepActivations> own;
  if (activations == nullptr) {
    EP_ASSIGN_OR_RETURN(own, BuildStepActivations(inputs, options));
    activations = &*own;
  }
  const planner::ActivationPlan* cache = activations->cache ? &*activations->cache : &activations->step;
  planner::MemoryInputs memory_inputs{&plan, inputs.tree.get(), &activations->step, cache, *memory_model};
  return planner::ComputeMemory(memory_inputs, memory);
}

StatusOr<planner::MemoryModel> StepMemoryModel(const Model& model) {
  EP_ASSIGN_OR_RETURN(schemas::ModelDims dims, schemas::ModelDimsOf(model.resolved()));
  EP_ASSIGN_OR_RETURN(planner::MemoryModel memory,
                      planner::MemoryModelOf(dims, schemas::GeometryConfig(model.config())));
  // The MoE block's execution at the model's EasyDeL version; a family without a reference forward pass
  // runs EasyDeL's fused MoE path (the default).
  if (StatusOr<const schemas::NumericCheckSpec*> forward = ForwardPassOf(model, "the memory model", "");
      forward.ok() && !(*forward)->structure.moe.block.empty()) {
    memory.moe_execution = (*forward)->structure.moe.execution;
  }
  return memory;
}

StatusOr<StepActivations> BuildStepActivations(const PlanInputs& inputs, const MemoryOptions& options) {
  const bool train = options.mode == "train";
  EP_ASSIGN_OR_RETURN(const planner::ActivationTable* table, inputs.model->ActivationTable());
  ActivationOptions step_flags;
  // A decode step: one query token per sequence against the cache of --seq tokens (the activation plan
  // of EasyDeL's decode_* rules); the other modes run their whole sequences.
  step_flags.mode = train ? "train" : options.mode == "decode" ? "decode" : "prefill";
  step_flags.batch = options.batch;
  step_flags.seq = options.seq;
  step_flags.dtype = options.activation_dtype;
  StepActivations out;
  EP_ASSIGN_OR_RETURN(const Checked<ActivationOptions> step_checked, Checked<ActivationOptions>::Of(step_flags));
  EP_ASSIGN_OR_RETURN(out.step,
                      BuildActivations(step_checked, *table, *inputs.presets, inputs.resolved(), inputs.mesh));
  if (!train && options.max_length && *options.max_length != *options.seq) {
    ActivationOptions cache_flags = step_flags;
    cache_flags.seq = options.max_length;
    EP_ASSIGN_OR_RETURN(const Checked<ActivationOptions> cache_checked, Checked<ActivationOptions>::Of(cache_flags));
    EP_ASSIGN_OR_RETURN(out.cache,
                        BuildActivations(cache_checked, *table, *inputs.presets, inputs.resolved(), inputs.mesh));
  }
  return out;
}

StatusOr<MemoryResult> Memory(const std::shared_ptr<const Model>& model, const PlanOptions& plan,
                              const MemoryOptions& options) {
  EP_ASSIGN_OR_RETURN(const Checked<MemoryRequest> checked, Checked<MemoryRequest>::Of({plan, options}));
  return Memory(model, checked);
}

Status OptionChecks(const MemoryRequest& request) {
  EP_RETURN_IF_ERROR(CheckPlanOptions(request.plan));
  return CheckMemoryOptions(request.step);
}

StatusOr<MemoryResult> Memory(const std::shared_ptr<const Model>& model, const Checked<MemoryRequest>& request) {
  const MemoryOptions& options = request->step;
  const Checked<PlanOptions> plan = request.PartOf(&MemoryRequest::plan);
  EP_RETURN_IF_ERROR(CheckStepMicrobatches("--microbatches", options.microbatches, model->env().limits));
  std::string budget_label;
  EP_ASSIGN_OR_RETURN(int64_t budget, MemoryBudget(*model, options, &budget_label));
  EP_ASSIGN_OR_RETURN(PlanInputs inputs, PreparePlan(model, plan));
  if (!inputs.has_config()) {
    return Status::BadInput({}, "memory needs CONFIG: the activations and the KV cache come from the model's config");
  }
  // A training schedule needs enough microbatches to fill its stages: refused, as the runtimes refuse it.
  // A serving step runs its whole batch through the stages as one microbatch (kServingWithPipeline;
  // CheckMemoryOptions refused --microbatches for it).
  if (options.mode == "train") EP_RETURN_IF_ERROR(planner::CheckMicrobatches(inputs.pipeline, options.microbatches));
  // Past a learned position table: exit 2 now; past a rotary bound: a finding, added beside the figures.
  EP_ASSIGN_OR_RETURN(const std::vector<planner::Finding> context, ContextLengthFindings(inputs, options));
  EP_ASSIGN_OR_RETURN(planner::Plan built, inputs.Build());
  MemoryResult result{std::move(inputs), std::move(built), std::nullopt, std::move(budget_label),
                      options.max_memory.empty() ? options.hardware : std::string()};
  // --microbatches: the memory of one microbatch's step, --batch / M sequences, which a pipeline's
  // stages keep several of.
  MemoryOptions step = options;
  if (options.microbatches > 1) step.batch = *options.batch / options.microbatches;
  // A plan with errors is still laid out (what it can lay out): its figures come with its findings.
  EP_ASSIGN_OR_RETURN(result.report, BuildMemoryReport(result.inputs, result.plan, step, budget));
  result.plan.findings.insert(result.plan.findings.begin(), context.begin(), context.end());
  return result;
}

}  // namespace easyplan::api
