#ifndef EASYPLAN_PLANNER_EXPERT_MESH_H_
#define EASYPLAN_PLANNER_EXPERT_MESH_H_

// The 3-D (dp, ep, tp) mesh EasyDeL folds out of the 5-D model mesh for mixture-of-experts blocks
// (EasyDeL easydel/infra/base_config.py: _mesh_shape_ep, expert_mesh).
//
// Each distinct mesh axis name joins one group, in this order: tp -> tp, ep -> ep, dp -> dp,
// fsdp -> ep if fsdp_is_ep_bound else dp, sp -> ep if sp_is_ep_bound else dp; a name already placed is
// skipped; an axis missing from the mesh counts as 1. The expert mesh is then the row-major reshape
// `mesh.devices.flatten().reshape(dp, ep, tp)`, not a regrouping of devices by axis:
//
//   mesh dp=1, fsdp=2, ep=1, tp=2, sp=2, both flags true -> (dp, ep, tp) = (1, 4, 2), devices
//   [[0, 1], [2, 3], [4, 5], [6, 7]]: the expert "tp" pair {0, 1} are sp neighbours in the 5-D mesh.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/mesh.h"

namespace easyplan::planner {

/// The five mesh-axis names partition_axis assigns (data_parallel_axis, ...), resolved in train mode.
struct ParallelAxisNames {
  std::string dp = "dp";
  std::string fsdp = "fsdp";
  std::string ep = "ep";
  std::string tp = "tp";
  std::string sp = "sp";
};

/// The names from a resolved config's partition_axis (EasyDeL's defaults for missing fields).
ParallelAxisNames ParallelAxisNamesOf(const Json& config);

/// fsdp_is_ep_bound and sp_is_ep_bound of a resolved config (both default to true).
struct ExpertBinding {
  bool fsdp_is_ep_bound = true;
  bool sp_is_ep_bound = true;
};
ExpertBinding ExpertBindingOf(const Json& config);

struct ExpertMesh {
  static constexpr int kDp = 0, kEp = 1, kTp = 2;
  std::array<int64_t, 3> shape = {1, 1, 1};         ///< (dp, ep, tp) sizes
  std::array<std::string, 3> axis_names;            ///< (dp_name, ep_name, tp_name)
  std::array<std::vector<std::string>, 3> members;  ///< the model-mesh axes folded into each group
  int64_t model_devices = 1;                        ///< devices of the 5-D mesh

  /// True when dp * ep * tp equals the model mesh's device count; otherwise EasyDeL's reshape fails
  /// (the mesh has axes outside the five, or a name maps to no mesh axis).
  bool Covers() const;
  int64_t NumDevices() const { return shape[0] * shape[1] * shape[2]; }
  /// The model-mesh device id at expert-mesh coordinates (row-major reshape of the flat device list).
  int64_t DeviceAt(int64_t dp, int64_t ep, int64_t tp) const { return (dp * shape[1] + ep) * shape[2] + tp; }
  /// "dp=1, ep=4, tp=2" with the expert mesh's axis names.
  std::string ToString() const;
};

/// Folds `mesh` as _mesh_shape_ep does. Group sizes are products of mesh sizes; the mesh was validated
/// not to overflow, so neither do they.
ExpertMesh FoldExpertMesh(const Mesh& mesh, const ParallelAxisNames& names, ExpertBinding binding);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_EXPERT_MESH_H_
