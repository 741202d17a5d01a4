#ifndef EASYPLAN_PLANNER_EXPORT_DTENSOR_H_
#define EASYPLAN_PLANNER_EXPORT_DTENSOR_H_

// PyTorch DTensor placements for a JAX PartitionSpec, and DTensor's per-rank local shape and global
// offset (pytorch torch/distributed/tensor/_utils.py compute_local_shape_and_global_offset,
// placement_types.py). Mesh dims apply left to right, each Shard(d) chunking the current local size of dim d as
// torch.chunk does; an empty shard reports the global dim size as its offset.
//
// A JAX entry (a1, a2) shards with a1 major. DTensor shards with the earlier mesh dim major, so an
// entry is expressible with plain Shard placements only when its axes (ignoring size-1 ones, which do
// not split anything) appear in mesh order. P(('sp', 'fsdp')) on a mesh ordered (fsdp, sp) is not:
// torch would need _StridedShard, a private placement, and the exporter says so instead.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/mesh.h"
#include "core/partition_spec.h"
#include "core/shape.h"
#include "core/status.h"
#include "planner/plan.h"
#include "planner/runtime_vocabulary.h"

namespace easyplan::planner {

struct Placement {
  enum class Kind { kReplicate, kShard, kStridedShard };
  Kind kind = Kind::kReplicate;
  int dim = 0;
  int64_t split_factor = 1;  ///< kStridedShard only

  static Placement Replicate() { return {}; }
  static Placement Shard(int dim) { return {Kind::kShard, dim, 1}; }
  static Placement StridedShard(int dim, int64_t split_factor) { return {Kind::kStridedShard, dim, split_factor}; }

  /// torch's repr: "Replicate()", "Shard(dim=0)", "_StridedShard(dim=0, sf=2)".
  std::string ToString() const;
  friend bool operator==(const Placement&, const Placement&) = default;
};

/// The placements of a spec on a mesh: one per mesh dim, or why plain placements cannot express it.
struct DTensorPlacements {
  std::vector<Placement> placements;  ///< empty when !reason.empty()
  std::string reason;                 ///< non-empty: not expressible with plain Shard/Replicate
};

/// Mesh dim k gets Shard(d) when spec entry d names axis k, else Replicate(). REQUIRES: every axis of
/// `spec` is a mesh axis, used once.
DTensorPlacements PlacementsFor(const Mesh& mesh, const PartitionSpec& spec);

/// A rank's piece of a DTensor: its local shape and the offset of its first element in the global tensor.
struct LocalShard {
  std::vector<int64_t> shape;
  std::vector<int64_t> offset;
  friend bool operator==(const LocalShard&, const LocalShard&) = default;
};

/// DTensor's local shape and global offset of the rank at `coordinate` (one per mesh dim).
/// _StridedShard(d, sf) splits the current local piece into sf torch.chunk pieces and takes this rank's
/// torch.chunk of each (the offset is then that of the first element held). REQUIRES: one placement
/// and one coordinate per mesh dim, shard dims within the rank, split factors >= 1.
LocalShard LocalShapeAndOffset(std::span<const int64_t> global_shape, std::span<const int64_t> mesh_shape,
                               std::span<const int64_t> coordinate, std::span<const Placement> placements);

/// DTensor's view of every rank: [{"ranks": [...], "local_shape": [...], "global_offset": [...]}], ranks
/// that hold the same local shard (same shape and offset) grouped in one row, rows in the order of
/// their first rank.
Json DTensorShardsJson(const Mesh& mesh, const Shape& shape, const std::vector<Placement>& placements);

/// The devices holding one per-expert tensor, as a DTensor DeviceMesh: `ranks` (global device ids,
/// row-major over `mesh`'s axes: every mesh axis but the stacked expert dim's). nullopt when they do not
/// form one (never for the layouts the planner builds).
struct ExpertSubMesh {
  Mesh mesh;
  std::vector<int64_t> ranks;
};
std::optional<ExpertSubMesh> ExpertSubMeshOf(const Mesh& mesh, const LayoutGroup& group, const PartitionSpec& spec);

/// The devices of pipeline stage `stage` that hold `group`'s tensor, as a DTensor DeviceMesh over every mesh
/// axis but the pp axis `pp_axis` (for a per-expert tensor, also but its expert dim's axes), `ranks` in
/// row-major order of those axes: the mesh a stage's modules are parallelized on (torchtitan's world mesh
/// without "pp"). nullopt when they do not form one (never for the layouts the planner builds).
std::optional<ExpertSubMesh> StageSubMeshOf(const Mesh& mesh, int pp_axis, const LayoutGroup& group,
                                            const PartitionSpec& spec, int64_t stage);

/// What `--to torch` adds for a pipelined plan (export_torch_pipeline.h).
struct TorchPipelineOptions {
  const RuntimeVocabulary* vocabulary = nullptr;  ///< schemas/runtimes/torch_pipelining.yaml
  std::optional<int64_t> microbatches;            ///< --microbatches: the schedule's n_microbatches
};

/// The `--to torch` artifact (docs/FORMATS.md): {"device_mesh": {"mesh_shape", "mesh_dim_names"},
/// "params": [{"name", "shape", "placements", "shards"}]}; a tensor plain placements cannot express
/// (axes out of mesh order, an expert held by part of the mesh) gets "placements": null and
/// "not_expressible" with the reason. A pipelined plan adds "pipeline" (TorchPipelineJson) after the device
/// mesh, and each tensor's row names its "stage" and that stage's sub-mesh (StageSubMeshOf); a tensor kept on
/// two stages (a tied embedding) has a row per stage. BadInput for what TorchPipelineJson refuses, Internal
/// for a pipelined plan without options.vocabulary. REQUIRES: the plan kept its params.
StatusOr<std::string> TorchExport(const Plan& plan, const ParamTree& tree, const TorchPipelineOptions& options = {});

/// About how many bytes TorchExport(plan, tree) writes, in O(tensors) time and no memory: every rank
/// listed in each tensor's shards (tensors x devices lines), every distinct shard (its local shape and
/// offset) and a fixed share per tensor.
/// The command refuses an export past --max-output-bytes before building it (docs/RELIABILITY.md).
uint64_t TorchExportSizeEstimate(const Plan& plan, const ParamTree& tree);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_EXPORT_DTENSOR_H_
