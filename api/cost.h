#ifndef EASYPLAN_API_COST_H_
#define EASYPLAN_API_COST_H_

// `cost`: one configuration's estimated step (docs/COST.md). The plan is laid out as `plan` lays it
// out, its memory is `memory`'s, and the step-time model (step/step_time.h) prices a dry run of the
// family's reference forward pass at full size (kernels/dry_run.h) on a hardware profile: compute per
// matmul as a roofline, every collective the plan implies (the ones `check` measures), overlap, and the
// totals (step time, tokens/s, MFU). `suggest` (api/suggest.h) calls EstimateStep per candidate.

#include <memory>
#include <optional>
#include <string>

#include "api/checked.h"
#include "api/model.h"
#include "api/options.h"
#include "api/plan_inputs.h"
#include "core/json.h"
#include "kernels/dry_run.h"
#include "kernels/model.h"
#include "planner/memory.h"
#include "planner/plan.h"
#include "step/estimate.h"
#include "step/hardware.h"
#include "step/pipeline_step.h"
#include "step/step_time.h"

namespace easyplan::api {

struct CostOptions {
  PlanOptions plan;
  /// mode (train, prefill or decode), batch (sequences per optimizer step, all microbatches together), seq,
  /// hardware (required: its figures price the step and its HBM is the budget) and the step state.
  MemoryOptions memory;
  PricingOptions pricing;  ///< microbatches, precision, torus
};

/// The option checks that need no config; `command` names the command in messages (suggest shares them).
Status CheckCostOptions(const CostOptions& options, const std::string& command = "cost");
/// What Checked<CostOptions> runs (api/checked.h).
inline Status OptionChecks(const CostOptions& options) { return CheckCostOptions(options); }

/// How a step of `memory` (mode, batch) is priced: --microbatches, --decode, --precision, --torus (cost,
/// report, suggest).
Status CheckStepPricing(const MemoryOptions& memory, const PricingOptions& pricing);

/// The estimate's types are step/'s (step/estimate.h); api names them for its callers.
using step::kMfuConvention;
using StepEstimate = step::StepEstimate;
using StepModel = step::StepModel;
using StepSettings = step::StepSettings;

/// --torus "4x4x8": the dims, each at least 1; "" is none. The message names the flag.
StatusOr<std::vector<int64_t>> ParseTorus(const std::string& text);

/// --torus needs a profile whose fast links are a TPU torus; `torus` empty passes.
Status CheckTorusOn(const std::vector<int64_t>& torus, const step::HardwareProfile& hardware);

/// --precision as its enum. REQUIRES: CheckStepPricing passed.
step::Precision PrecisionOf(const PricingOptions& pricing);

/// --precision fp8 needs a profile with peak_flops_fp8.
Status CheckPrecisionOn(step::Precision precision, const step::HardwareProfile& hardware);

/// The dry run's model of `plan` (step::StepModel): its full-size description, active matmul parameters and
/// attention kernel.
StatusOr<StepModel> StepModelOf(const PlanInputs& inputs, const planner::Plan& plan);

/// `memory` with the mode, batch (one microbatch) and seq of `settings`.
MemoryOptions StepMemoryOptions(const MemoryOptions& memory, const StepSettings& settings);

/// The dry run of one microbatch's forward of `settings` over `plan` (what every checkpoint policy, and every
/// pipeline split of the mesh, shares); EstimateStep adds the plan's step records (kernels/step_records.h).
StatusOr<kernels::DryRunReport> DryRunStep(const PlanInputs& inputs, const planner::Plan& plan, const StepModel& model,
                                           const StepSettings& settings);

/// `forward` (DryRunStep's) with `plan`'s step records (kernels/step_records.h): its stage sends and, in
/// training, its gradient sync in the gradient dtype of `memory`.
StatusOr<kernels::DryRunReport> WithStepRecords(const PlanInputs& inputs, const planner::Plan& plan,
                                                const StepModel& model, const MemoryOptions& memory,
                                                const StepSettings& settings, kernels::DryRunReport forward);

/// Prices `plan` (built from `inputs`) for `settings` on `hardware` with `budget` bytes per device.
/// `memory` carries the step-state options (optimizer, dtypes); its mode, batch and seq are replaced.
/// `memory_report` and `run`, when given, are that step's memory (BuildMemoryReport of
/// StepMemoryOptions) and dry run with its step records (WithStepRecords of DryRunStep), which suggest
/// shares between estimates.
StatusOr<StepEstimate> EstimateStep(const PlanInputs& inputs, const planner::Plan& plan, const StepModel& model,
                                    const step::HardwareProfile& hardware, const MemoryOptions& memory, int64_t budget,
                                    const StepSettings& settings, const planner::MemoryReport* memory_report = nullptr,
                                    const kernels::DryRunReport* run = nullptr);

/// EstimateStep of a plan as it is laid out: nullopt when the plan has errors that leave a layout the
/// step model cannot price (`cost` and `report` then show the findings alone).
StatusOr<std::optional<StepEstimate>> EstimateLaidOutPlan(const PlanInputs& inputs, const planner::Plan& plan,
                                                          const step::HardwareProfile& hardware,
                                                          const MemoryOptions& memory, int64_t budget,
                                                          const StepSettings& settings,
                                                          const planner::MemoryReport* memory_report = nullptr);

struct CostResult {
  PlanInputs inputs;
  planner::Plan plan;
  StepSettings settings;
  const step::HardwareProfile* hardware = nullptr;
  std::string budget_label;  ///< "tpu-v5p (95.0 GiB HBM)", or --max-memory as given
  /// Also for a plan with errors (priced as laid out); nullopt only when such a plan cannot be priced.
  std::optional<StepEstimate> estimate;
  /// The matmul efficiency the step assumed, in one line and in detail (the measured shape and tiles;
  /// step::MatmulEfficiencyAssumption).
  std::string matmul_assumption_brief, matmul_assumption;
};

/// `cost`: the plan and its step estimate (a plan with errors too, its findings alongside).
StatusOr<CostResult> Cost(const std::shared_ptr<const Model>& model, const Checked<CostOptions>& options);
/// The same for options not checked yet: checked once (CheckCostOptions), then priced.
StatusOr<CostResult> Cost(const std::shared_ptr<const Model>& model, const CostOptions& options);

/// `cost --format json` (docs/COST.md).
Json CostToJson(const CostResult& result);

/// A pipelined step's schedule, bubble, sends and stages (docs/PIPELINE.md).
Json PipelineStepJson(const step::PipelineStep& pipeline, const planner::PipelineSplit& split);

/// [{"scope", "count", "compute_s", "communication_s"}, ...]: one forward of each layer kind.
Json LayerCostsJson(const step::StepCost& step);

/// {"all_gather", "reduce_scatter", "all_reduce", "all_to_all"}: bytes per device of each kind.
Json KindBytesJson(const step::KindBytes& bytes);

/// {axis: size} in mesh order; `skip_ones` leaves out axes of size 1 (a --dcn's factors).
Json AxisSizesJson(const std::vector<std::string>& names, const std::vector<int64_t>& sizes, bool skip_ones = false);

/// The settings' names as the CLI spells them ("nothing_saveable", "" for none).
std::string PolicyFlagValue(planner::CheckpointPolicy policy);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_COST_H_
