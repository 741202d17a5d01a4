#ifndef EASYPLAN_PLANNER_MESH_BUILDER_H_
#define EASYPLAN_PLANNER_MESH_BUILDER_H_

// Building the device mesh a plan is laid on: from `--mesh dp=1,fsdp=-1,tp=8`, `--devices N` and
// `--dcn fsdp=2`, or from the config's sharding_axis_dims / sharding_axis_names
// (EasyDeL's EasyDeLBaseConfig.create_mesh, easydel/infra/base_config.py; eformer's create_mesh,
// eformer/escale/mesh/creation.py; JAX's jax/_src/mesh_utils.py for the hybrid DCN layout).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/mesh.h"
#include "core/status.h"

namespace easyplan::planner {

/// One `NAME=SIZE` list as written (`--mesh` or `--dcn`), in the order given.
struct AxisSizes {
  std::vector<std::string> names;
  std::vector<int64_t> sizes;  ///< -1 = "fill from --devices"; else >= 1
};

/// Parses "dp=1,fsdp=-1,ep=1,tp=8,sp=1". `flag` ("--mesh", "--dcn") prefixes messages. Errors: empty
/// list, missing '=', a size that is not an integer, 0 or below -1, a repeated name, more than
/// `max_axes` axes.
StatusOr<AxisSizes> ParseAxisSizes(std::string_view text, std::string_view flag, int max_axes = 16);

/// What the user asked for. `ici` is the per-slice mesh (at most one -1); `dcn` names a subset of
/// ici's axes with their slice factors (absent axes = 1; at most one -1, filled so the DCN product is
/// the slice count); `devices` is the total device count (needed to fill a -1).
struct MeshRequest {
  AxisSizes ici;
  std::optional<AxisSizes> dcn;
  std::optional<int64_t> devices;
};

/// Resolves -1s and builds the Mesh. Global axis size = ici * dcn elementwise (DCN major, as JAX's
/// create_hybrid_device_mesh). Errors quote the numbers: "two axes are -1 (fsdp, tp): at most one
/// can be filled", "--devices 12 is not divisible by the product of the other axes 8", "the mesh
/// has 16 devices (dp=2 x fsdp=8) but --devices says 8", "--dcn names axis 'xp' that is not in the
/// mesh (dp, fsdp, ep, tp, sp)", a -1 without --devices, and a device count above `max_devices`
/// or one that overflows int64.
StatusOr<Mesh> BuildMesh(const MeshRequest& request, int64_t max_devices = int64_t{1} << 24);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_MESH_BUILDER_H_
