#ifndef EASYPLAN_PLANNER_EXPORT_SHARDY_H_
#define EASYPLAN_PLANNER_EXPORT_SHARDY_H_

// Shardy (openxla/shardy `sdy` dialect) mesh and tensor-sharding attributes, printed as Shardy prints
// them (openxla/shardy docs/sharding_representation.md, shardy/dialect/sdy/ir/attrs.td):
//
//   sdy.mesh @mesh = <["dp"=1, "fsdp"=2, "ep"=1, "tp"=2, "sp"=1]>
//   #sdy.sharding<@mesh, [{"fsdp", "sp"}, {"tp"}]>
//
// JAX's named_sharding_to_sdy_sharding: one dim sharding per array dim, the spec entry's axes in
// order (closed), None -> {}; the mesh keeps every axis, size 1 included.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/mesh.h"
#include "core/partition_spec.h"
#include "planner/plan.h"

namespace easyplan::planner {

/// `"x"` or the sub-axis `"x":(pre_size)size`.
struct SdyAxisRef {
  std::string name;
  std::optional<std::pair<int64_t, int64_t>> sub_axis;  ///< (pre_size, size)
  friend bool operator==(const SdyAxisRef&, const SdyAxisRef&) = default;
};

/// `{"a", "b"}` (closed), `{"a", ?}` / `{?}` (open), optionally with a priority `p<N>`.
struct SdyDimSharding {
  std::vector<SdyAxisRef> axes;
  bool open = false;
  std::optional<int64_t> priority;
  friend bool operator==(const SdyDimSharding&, const SdyDimSharding&) = default;
};

/// `<["a"=2, "b"=4]>`, with `device_ids=[...]` printed only when they are not iota (or the mesh has no
/// axes, the maximal mesh `<[], device_ids=[0]>`).
struct SdyMesh {
  std::vector<std::pair<std::string, int64_t>> axes;
  std::vector<int64_t> device_ids;  ///< empty = iota
  friend bool operator==(const SdyMesh&, const SdyMesh&) = default;
};

/// `<@mesh, [dims...]{, replicated={...}}{, unreduced=<kind>{...}}>`; the mesh is a reference
/// (`@name`) or inlined (`mesh<[...]>`).
struct SdyTensorSharding {
  std::string mesh_name;  ///< used when !inline_mesh
  std::optional<SdyMesh> inline_mesh;
  std::vector<SdyDimSharding> dims;
  std::vector<SdyAxisRef> replicated;
  std::vector<SdyAxisRef> unreduced;
  std::string unreduced_kind;  ///< printed before the unreduced braces ("max"), empty for the default
  friend bool operator==(const SdyTensorSharding&, const SdyTensorSharding&) = default;
};

/// `<["a"=2, "b"=4]>`.
std::string SdyMeshAttrText(const SdyMesh& mesh);
/// `<@mesh, [{"a"}, {}]>` (the body Shardy prints after `#sdy.sharding`).
std::string SdyTensorShardingBody(const SdyTensorSharding& sharding);

/// The sdy.mesh of a mesh: every axis in mesh order, iota devices.
SdyMesh SdyMeshOf(const Mesh& mesh);
/// `sdy.mesh @<name> = <[...]>`: the module-level mesh definition.
std::string SdyMeshDefinition(const Mesh& mesh, std::string_view name = "mesh");
/// `#sdy.sharding<@<mesh_name>, [...]>` for NamedSharding(mesh, spec) on a rank-`rank` array; a spec
/// shorter than the rank gets `{}` for the remaining dims. REQUIRES: spec.size() <= rank.
std::string SdyShardingAttr(const PartitionSpec& spec, int rank, std::string_view mesh_name = "mesh");

/// The `--to shardy` artifact: the sdy.mesh definition, then one `NAME\t#sdy.sharding<...>` line per
/// tensor of the plan; with `json`, {"mesh": "sdy.mesh ...", "params": [{"name", "sharding"}]}.
/// REQUIRES: the plan kept its params.
std::string ShardyExport(const Plan& plan, const ParamTree& tree, bool json);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_EXPORT_SHARDY_H_
