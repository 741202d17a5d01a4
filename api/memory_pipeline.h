#ifndef EASYPLAN_API_MEMORY_PIPELINE_H_
#define EASYPLAN_API_MEMORY_PIPELINE_H_

// A step's memory (planner/memory.h, docs/MEMORY.md) from a plan and its inputs: the activation plans
// of the step and of the KV cache, the model's dims, the checkpointing policy of the config and the
// device budget. Shared by `memory`, `validate --max-memory --mode` and `check --memory`.

#include <memory>
#include <optional>
#include <string>

#include "api/options.h"
#include "api/plan_inputs.h"
#include "planner/activations.h"
#include "planner/memory.h"
#include "planner/plan.h"

namespace easyplan::api {

/// True when an option of the step's state (--max-length, --optimizer, --grad-dtype,
/// --opt-state-dtype, --master-weights) differs from its default.
bool HasStepStateOptions(const MemoryOptions& options);

/// The option checks that need no config; `command` names the command in messages.
Status CheckMemoryOptions(const MemoryOptions& options, const std::string& command = "memory");
/// What Checked<MemoryOptions> runs (api/checked.h).
inline Status OptionChecks(const MemoryOptions& options) { return CheckMemoryOptions(options); }

/// What a serving step does with a pp axis, said once (docs/PIPELINE.md, "Serving with a pipeline"): the
/// note of every message that refuses part of it, so that no hint points at an option another refuses.
inline constexpr const char* kServingWithPipeline =
    "with a pp axis, a serving step (--mode prefill or decode) runs its whole --batch through the stages "
    "forward only, one microbatch: memory gives its figures per stage; cost, report's cost and suggest price "
    "pipelined training steps only (docs/PIPELINE.md)";

/// --microbatches M > 1 splits a training step (gradient accumulation, or a pipeline schedule's
/// microbatches): refused for a serving --mode, by memory, cost and report alike.
Status CheckMicrobatchesNeedTraining(int64_t microbatches, const std::string& mode);

/// A pipelined serving step is not priced: bad input naming `command`, the mode and the stages, with
/// kServingWithPipeline as its note; Status() for a training step or a plan without a pipeline.
Status CheckPricedPipeline(const std::string& command, const std::string& mode, int64_t stages);

/// --mode as a memory mode: train, prefill or decode. REQUIRES: CheckMemoryOptions passed.
Mode MemoryModeOf(const std::string& mode);

/// The budget of --max-memory, else the memory of --hardware (a profile's HBM, or a memory-only
/// accelerator of the hardware catalogue), else 80GiB; `label` receives how to show it ("80GiB",
/// "h100-80g (80.0 GiB)", "tpu-v5p (95.0 GiB HBM)").
StatusOr<int64_t> MemoryBudget(const Model& model, const MemoryOptions& options, std::string* label);

/// A step's activation plans: the step's own and, serving with --max-length, the KV cache's.
struct StepActivations {
  planner::ActivationPlan step;
  std::optional<planner::ActivationPlan> cache;
};
StatusOr<StepActivations> BuildStepActivations(const PlanInputs& inputs, const MemoryOptions& options);

/// The memory report of `plan` (built from `inputs`). REQUIRES: CheckMemoryOptions passed. `policy`
/// replaces the config's gradient_checkpointing (suggest tries every policy on one resolved config);
/// `activations`, when given, are BuildStepActivations(inputs, options), which the policies share;
/// `worst_only` keeps only the worst device (planner::MemoryOptions::worst_only); `memory_model`, when
/// given, is StepMemoryModel(inputs), which suggest computes once for thousands of reports.
StatusOr<planner::MemoryReport> BuildMemoryReport(const PlanInputs& inputs, const planner::Plan& plan,
                                                  const MemoryOptions& options, int64_t budget,
                                                  std::optional<planner::CheckpointPolicy> policy = std::nullopt,
                                                  const StepActivations* activations = nullptr, bool worst_only = false,
                                                  const planner::MemoryModel* memory_model = nullptr);

/// What the memory model reads of `model`'s config: its dims and geometry settings.
StatusOr<planner::MemoryModel> StepMemoryModel(const Model& model);

/// The config's gradient_checkpointing as a policy the memory model covers; bad input naming the
/// policies otherwise.
StatusOr<planner::CheckpointPolicy> ConfigCheckpointPolicy(const Json& config);

/// `memory`: the plan and its memory report, figures even when the plan has errors.
struct MemoryResult {
  PlanInputs inputs;
  planner::Plan plan;
  std::optional<planner::MemoryReport> report;  ///< also for a plan with errors (their findings come with it)
  std::string budget_label;                     ///< "80GiB", "h100-80g (80.0 GiB)"
  std::string hardware;                         ///< --hardware as given when its HBM is the budget, else ""
};

/// The memory of `model` planned under `plan` for the step of `options`.
/// `memory`'s options: the plan's and the step's.
struct MemoryRequest {
  PlanOptions plan;
  MemoryOptions step;
};
/// What Checked<MemoryRequest> runs (api/checked.h): CheckPlanOptions and CheckMemoryOptions.
Status OptionChecks(const MemoryRequest& request);

StatusOr<MemoryResult> Memory(const std::shared_ptr<const Model>& model, const Checked<MemoryRequest>& request);
/// The same for options not checked yet: checked once (OptionChecks(MemoryRequest)), then reported.
StatusOr<MemoryResult> Memory(const std::shared_ptr<const Model>& model, const PlanOptions& plan,
                              const MemoryOptions& options);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_MEMORY_PIPELINE_H_
