#ifndef EASYPLAN_PLANNER_EXPORT_HLO_H_
#define EASYPLAN_PLANNER_EXPORT_HLO_H_

// The XLA HLO sharding text JAX attaches for a NamedSharding (jax/_src/named_sharding.py, xla
// xla/hlo/ir/hlo_sharding.cc and tile_assignment.cc): jax's named_sharding_to_xla_hlo_sharding followed by XLA's own
// canonicalisation (IotaTileAssignment::Create, HloSharding::PartialTile, HloSharding::Subgroup) and
// HloSharding::ToString. Examples on the mesh axis_0=2, axis_1=4, axis_2=4:
//
//   P('axis_2', ('axis_0', 'axis_1'))  ->  {devices=[4,8]<=[8,4]T(1,0)}
//   P(None, 'axis_0')                  ->  {devices=[1,2,16]<=[32] last_tile_dim_replicate}
//   P(None, None)                      ->  {replicated}
//
// `devices=[d0,..]<=[r0,..]T(p0,..)` reads as numpy: iota(prod(r)).reshape(r).transpose(p).reshape(d).

#include <cstdint>
#include <string>
#include <vector>

#include "core/mesh.h"
#include "core/partition_spec.h"
#include "planner/plan.h"

namespace easyplan::planner {

/// A sharding over "atomic" device axes: the device array is iota(prod(axis_sizes)).reshape(axis_sizes),
/// row-major (device ids = positions of an iota-ordered mesh). Each tensor dim lists the axes that tile
/// it, major first; axes no dim names are replicated unless listed as manual or unreduced. A JAX mesh
/// gives one atomic axis per mesh axis; Shardy sub-axes ("x":(2)2) are expressed by splitting an axis
/// into several atomic ones.
struct AtomicAxesSharding {
  std::vector<int64_t> axis_sizes;         ///< all >= 1
  std::vector<std::vector<int>> dim_axes;  ///< one per tensor dim: indices into axis_sizes
  std::vector<int> manual_axes;            ///< shard_map manual axes (not used by any dim)
  std::vector<int> unreduced_axes;         ///< unreduced axes (not used by any dim)
};

/// The HLO sharding text of `sharding`, exactly as XLA prints it (V2 iota form, or the V1 device list
/// where XLA itself falls back to one). REQUIRES: every axis index is valid and used at most once.
std::string HloShardingText(const AtomicAxesSharding& sharding);

/// The HLO sharding text of NamedSharding(mesh, spec) on a rank-`rank` array, as JAX lowers it:
/// size-1 mesh axes are dropped first, a spec shorter than the rank is padded with None, and
/// `manual_axes` / `unreduced_axes` name mesh axes that are manual (inside shard_map) or unreduced.
/// REQUIRES: spec.size() <= rank, every axis of spec is a mesh axis, used once.
std::string HloShardingText(const Mesh& mesh, const PartitionSpec& spec, int rank,
                            const std::vector<std::string>& manual_axes = {},
                            const std::vector<std::string>& unreduced_axes = {});

/// XLA's TileAssignment text for an iota assignment, canonicalised as IotaTileAssignment::Create does:
/// ({3,4,5}, {3,4,5}, {2,0,1}) -> "devices=[3,4,5]<=[12,5]T(1,0)". REQUIRES: prod(dims) ==
/// prod(reshape_dims) and perm is a permutation of reshape_dims' indices.
std::string IotaTileAssignmentText(const std::vector<int64_t>& dims, const std::vector<int64_t>& reshape_dims,
                                   const std::vector<int>& perm);

/// The device ids of that assignment in row-major tile order (numpy iota(..).reshape(r).transpose(p).ravel()).
std::vector<int64_t> IotaTileAssignmentDevices(const std::vector<int64_t>& reshape_dims, const std::vector<int>& perm);

/// The V1 (explicit list) TileAssignment text: "devices=[2,2]0,1,2,3".
std::string ExplicitTileAssignmentText(const std::vector<int64_t>& dims, const std::vector<int64_t>& devices);

/// The `--to xla-hlo` artifact: one `NAME\tSHARDING` line per tensor of the plan, or with `json`
/// {"mesh": {"axis_names", "shape"}, "params": [{"name", "sharding"}]}. `tree` is the planned tree.
/// REQUIRES: the plan kept its params.
std::string XlaHloExport(const Plan& plan, const ParamTree& tree, bool json);

/// A tuple sharding, as HloSharding prints one: "{s0, s1, ...}" with "/*index=5*/" before every
/// fifth element.
std::string HloTupleText(const std::vector<std::string>& elements);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_EXPORT_HLO_H_
