#ifndef EASYPLAN_PLANNER_EXPORT_TP_PLAN_H_
#define EASYPLAN_PLANNER_EXPORT_TP_PLAN_H_

// A transformers tensor-parallel plan (`base_model_tp_plan` style, as the configuration_<family>.py files
// of src/transformers/models/ declare it; src/transformers/integrations/tensor_parallel.py) derived from where
// the plan's tensor-parallel axis shards each HF tensor. Styles follow transformers v5's ParallelInterface
// (weights are nn.Linear `[out, in]`):
//
//   weight dim 0 (-2) sharded by tp, bias sharded or absent  ->  "colwise" when a sibling module is
//                                                               rowwise (q/k/v next to o_proj, gate/up next
//                                                               to down_proj), which consumes the sharded
//                                                               output; else "colwise_rep" (output gathered:
//                                                               lm_head, a router gate)
//   weight dim 1 (-1) sharded by tp, bias replicated/absent  ->  "rowwise"
//   embedding: vocab dim sharded -> "embedding_rowwise"; hidden dim sharded -> "colwise_rep"
//
// Keys are module paths with layer indices replaced as transformers' replace_layer_number_by_wildcard
// does (`\.\d+(\.|$)` -> `.*`): `model.layers.0.self_attn.q_proj.weight` -> `layers.*.self_attn.q_proj`
// in base_model_tp_plan (relative to `model.`), `model.layers.*.self_attn.q_proj` in the full tp_plan.
// Anything tp shards that no style reproduces is listed in `unmapped` with the reason, never dropped.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/json.h"
#include "core/mesh.h"
#include "core/partition_spec.h"
#include "core/shape.h"
#include "planner/plan.h"

namespace easyplan::planner {

/// One HF tensor: its checkpoint name (`model.layers.0.mlp.up_proj.weight`), shape and effective spec.
struct TpTensor {
  std::string name;
  Shape shape;
  PartitionSpec spec;
  /// False for tensors only the checkpoint layout has (FP8 scales, a DeepSeek MTP layer; the plan
  /// replicates them): they get no style and are listed in `unmapped`.
  bool in_model = true;
  /// Why no style can shard it (planner::FusedMisalignedReason); "" when one may. Listed in `unmapped`.
  std::string refused;
};

struct TpUnmapped {
  std::string name;  ///< generic (wildcard) parameter name
  std::string reason;
  int64_t tensors = 0;  ///< how many tensors share this name and reason
};

/// Tensors sharded by axes other than tp: DTensor/FSDP's business, not the tp_plan's; listed so that
/// nothing is silently dropped.
struct TpOtherAxes {
  std::string name;  ///< generic parameter name
  std::vector<std::string> axes;
  int64_t tensors = 0;
};

struct TpPlanExport {
  std::string tp_axis;
  int64_t tp_size = 1;
  std::vector<std::pair<std::string, std::string>> base_model_tp_plan;  ///< keys relative to `model.`
  std::vector<std::pair<std::string, std::string>> tp_plan;             ///< full module paths
  std::vector<TpUnmapped> unmapped;
  std::vector<TpOtherAxes> other_axes;
};

/// transformers' replace_layer_number_by_wildcard: `a.0.b` -> `a.*.b`, `a.0` -> `a.*`, `a.0.1.b` ->
/// `a.*.1.b` (matches do not overlap), `w1` unchanged.
std::string ReplaceLayerNumberByWildcard(std::string_view name);

/// Derives the plan. Axes of size 1 shard nothing and are ignored. `tp_axis` missing from the mesh or
/// of size 1 gives an empty plan. Output order: first appearance in `tensors`.
TpPlanExport DeriveTpPlan(const std::vector<TpTensor>& tensors, const Mesh& mesh, const std::string& tp_axis);

/// The `--to hf-tp-plan` artifact: DeriveTpPlan over the plan's tensors (`tree` in the HF layout) as
/// JSON: {"tp_axis", "tp_size", "base_model_tp_plan", "tp_plan", "unmapped": [{"name", "tensors",
/// "reason"}], "sharded_by_other_axes": [{"name", "tensors", "axes"}]}. REQUIRES: the plan kept its params.
std::string HfTpPlanExport(const Plan& plan, const ParamTree& tree, const std::string& tp_axis);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_EXPORT_TP_PLAN_H_
