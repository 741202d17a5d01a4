#ifndef EASYPLAN_API_PLAN_PIPELINE_H_
#define EASYPLAN_API_PLAN_PIPELINE_H_

// `plan`: a Model's plan under PlanOptions, with the expert mesh of a MoE config, and the artifacts
// every caller of a plan wants (its JSON, the ordered rules with their resolved specs).

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/activation_pipeline.h"
#include "api/plan_inputs.h"
#include "api/plan_json.h"
#include "core/partition_spec.h"
#include "planner/plan.h"

namespace easyplan::api {

struct PlanResult {
  PlanInputs inputs;
  planner::Plan plan;
  std::optional<ExpertReport> experts;  ///< MoE configs only
};

/// Per-call options of `plan` besides PlanOptions.
struct PlanViewOptions {
  std::optional<int64_t> rank;  ///< --rank K: each tensor's slice and replica id on device K
  bool summary = false;         ///< --summary: no per-tensor entries
};

/// The plan of `model` under `options`. A plan with error findings is returned too (the findings say
/// what is wrong); bad input (a bad mesh, a --rank outside it) is a Status.
StatusOr<PlanResult> PlanModel(const std::shared_ptr<const Model>& model, const Checked<PlanOptions>& options,
                               const PlanViewOptions& view = {});
/// The same for options not checked yet: checked once (CheckPlanOptions), then planned.
StatusOr<PlanResult> PlanModel(const std::shared_ptr<const Model>& model, const PlanOptions& options,
                               const PlanViewOptions& view = {});

/// What the terminal and JSON forms read of `result`: the plan, tree, rules, expert report and EasyDeL version.
PlanView ViewOfPlan(const PlanResult& result, const PlanViewOptions& view = {});

/// `plan --format json` of `result`.
std::string PlanResultToJsonText(const PlanResult& result, const PlanViewOptions& view = {});

/// Every rule of the plan's rule set in order, with the spec it resolves to under the config (its
/// holding case, presets and tokens resolved to mesh axes): eformer's `match_partition_rules` input.
StatusOr<std::vector<std::pair<std::string, PartitionSpec>>> ResolvedRules(const PlanInputs& inputs);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_PLAN_PIPELINE_H_
