#ifndef EASYPLAN_API_PLAN_JSON_H_
#define EASYPLAN_API_PLAN_JSON_H_

// The machine-readable plan (schemas/json/plan.schema.json) and findings: the JSON `plan --format json`
// and `validate --format json` print and the Python module returns, written as text in a fixed key
// order and layout so goldens stay readable and byte-stable.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/param_tree.h"
#include "planner/activations.h"
#include "planner/expert_mesh.h"
#include "planner/plan.h"
#include "rules/rule_set.h"

namespace easyplan::api {

/// What a rendering needs besides the plan itself.
struct PlanView {
  const planner::Plan* plan = nullptr;
  const ParamTree* tree = nullptr;
  const rules::RuleSet* rules = nullptr;
  std::optional<int64_t> rank;  ///< --rank K: add each tensor's slice and replica id on device K
  bool summary_only = false;    ///< --summary: the per-device summary without the tensor rows
  /// MoE configs: the folded expert mesh and expert specs (both set, or neither).
  const planner::ExpertMesh* expert_mesh = nullptr;
  const planner::ExpertSpecs* expert_specs = nullptr;
  /// How the tree holds a quantized checkpoint's weights (api::QuantizedWeights); "" for other models.
  std::string weights;
  /// The EasyDeL version the plan describes (schemas/easydel_versions.yaml); "" for none.
  std::string easydel_version;
};

/// Per-device bytes: min, median (lower), max, and the first device holding the max.
struct DeviceSummary {
  int64_t min = 0;
  int64_t median = 0;
  int64_t max = 0;
  int64_t worst_device = 0;
  int64_t total = 0;  ///< bytes over all devices (sum of device_bytes)
};
DeviceSummary SummarizeDevices(const std::vector<int64_t>& device_bytes);

/// "error", "warning", "note".
std::string_view SeverityName(Severity severity);

std::string PlanToJsonText(const PlanView& view);

/// A pipeline's split, the members `plan`, `memory` and `cost` share in their "pipeline" object:
/// {"stages", "schedule", "virtual_stages", "layers" (per model chunk)}.
Json PipelineSplitJson(const planner::PipelineSplit& split);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_PLAN_JSON_H_
