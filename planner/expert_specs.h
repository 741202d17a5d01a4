#ifndef EASYPLAN_PLANNER_EXPERT_SPECS_H_
#define EASYPLAN_PLANNER_EXPERT_SPECS_H_

// The MoE side of an activation plan: the specs of the stacked expert kernels and of EasyDeL's fused
// MoE path (easydel/layers/moe/), on the (dp, ep, tp) expert mesh planner/expert_mesh.h folds out of
// the model mesh, and what EasyDeL refuses about that mesh.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/json.h"
#include "core/partition_spec.h"
#include "core/status.h"
#include "planner/activation_table.h"
#include "planner/expert_mesh.h"
#include "planner/findings.h"
#include "rules/presets.h"

namespace easyplan::planner {

/// The MoE side of a config: expert count, expert mesh, the stacked expert kernels' parameter specs
/// (get_moe_partition_spec with module_view=True, on the model mesh) and the fused path's specs.
struct ExpertSpecs {
  int64_t experts = 0;
  bool expert_tensor_mode = false;
  PartitionSpec column, row, bias;                           ///< on the model mesh
  std::vector<std::pair<std::string, PartitionSpec>> fused;  ///< on the expert mesh
  PartitionSpec model_output;                                ///< after the block, on the model mesh
};

/// Expert specs of a MoE config with `experts` routed experts (schemas::ModelDims::experts); nullopt for
/// a dense one (0 experts).
StatusOr<std::optional<ExpertSpecs>> GetExpertSpecs(const ActivationTable& table, const rules::Presets& presets,
                                                    const Json& config, int64_t experts, const ExpertMesh& expert_mesh);

/// Findings about the expert mesh: a reshape EasyDeL cannot do, expert-tensor mode with tp > 1, experts
/// the folded ep does not divide.
std::vector<Finding> ExpertMeshFindings(const ExpertMesh& expert_mesh, const std::optional<ExpertSpecs>& specs);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_EXPERT_SPECS_H_
