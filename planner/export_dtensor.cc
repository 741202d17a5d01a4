#include "planner/export_dtensor.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "core/emit.h"
#include "core/status.h"
#include "planner/export_torch_pipeline.h"
#include "planner/pipeline.h"

namespace easyplan::planner {
namespace {

// Runs of global indices [start, start + length) that a rank's local piece of one dim holds, in order.
using Runs = std::vector<std::pair<int64_t, int64_t>>;

int64_t Length(const Runs& runs) {
  int64_t total = 0;
  for (const auto& run : runs) total += run.second;
  return total;
}

// Elements [from, from + count) of the concatenated runs.
Runs Slice(const Runs& runs, int64_t from, int64_t count) {
  Runs out;
  for (const auto& [start, length] : runs) {
    if (count == 0) break;
    if (from >= length) {
      from -= length;
      continue;
    }
    const int64_t take = std::min(length - from, count);
    out.emplace_back(start + from, take);
    count -= take;
    from = 0;
  }
  return out;
}

// torch's Shard._local_shard_size_and_offset (torch.chunk): (size, start) of chunk `index` of `size`
// split `n` ways; a chunk past the end is empty.
std::pair<int64_t, int64_t> Chunk(int64_t size, int64_t n, int64_t index) {
  if (size % n == 0) return {size / n, size / n * index};
  const int64_t chunk = size / n + 1;
  if (index > size / chunk) return {0, size};
  const int64_t start = chunk * index;
  return {std::min(size - start, chunk), start};
}

}  // namespace

std::string Placement::ToString() const {
  switch (kind) {
    case Kind::kReplicate:
      return "Replicate()";
    case Kind::kShard:
      return fmt::format("Shard(dim={})", dim);
    case Kind::kStridedShard:
      return fmt::format("_StridedShard(dim={}, sf={})", dim, split_factor);
  }
  return "Replicate()";
}

DTensorPlacements PlacementsFor(const Mesh& mesh, const PartitionSpec& spec) {
  DTensorPlacements out;
  out.placements.assign(mesh.shape.size(), Placement::Replicate());
  for (int d = 0; d < spec.size(); ++d) {
    std::optional<int> previous;  // mesh index of the previous axis of size > 1 in this entry
    std::string previous_name;
    for (const std::string& axis : spec[d]) {
      std::optional<int> k = mesh.AxisIndex(axis);
      EP_CHECK(k.has_value(), "'" + axis + "' is not an axis of the mesh " + mesh.ToString());
      out.placements[static_cast<size_t>(*k)] = Placement::Shard(d);
      if (mesh.shape[static_cast<size_t>(*k)] == 1) continue;
      if (previous && *previous > *k) {
        std::string entry = PartitionSpec({spec[d]}).ToString();  // "P(('sp', 'fsdp'))"
        entry = entry.substr(2, entry.size() - 3);
        out.reason = fmt::format(
            "dim {} is sharded by {} with '{}' major, but '{}' comes after '{}' in the mesh; DTensor applies mesh dims "
            "in mesh order, so plain Shard placements would make '{}' major (torch would need _StridedShard)",
            d, entry, previous_name, previous_name, axis, axis);
        out.placements.clear();
        return out;
      }
      previous = *k;
      previous_name = axis;
    }
  }
  return out;
}

LocalShard LocalShapeAndOffset(std::span<const int64_t> global_shape, std::span<const int64_t> mesh_shape,
                               std::span<const int64_t> coordinate, std::span<const Placement> placements) {
  EP_CHECK(placements.size() == mesh_shape.size() && coordinate.size() == mesh_shape.size(),
           fmt::format("expected one placement per mesh dim, but found {} placements and {} mesh dims",
                       placements.size(), mesh_shape.size()));
  std::vector<Runs> held;
  for (int64_t size : global_shape) held.push_back(Runs{{0, size}});
  std::vector<bool> emptied(global_shape.size(), false);
  for (size_t k = 0; k < placements.size(); ++k) {
    const Placement& p = placements[k];
    if (p.kind == Placement::Kind::kReplicate) continue;
    EP_CHECK(p.dim >= 0 && static_cast<size_t>(p.dim) < global_shape.size(),
             fmt::format("shard dim {} is not a dim of a rank-{} tensor", p.dim, global_shape.size()));
    const size_t d = static_cast<size_t>(p.dim);
    const int64_t n = mesh_shape[k];
    const int64_t c = coordinate[k];
    Runs& runs = held[d];
    if (p.kind == Placement::Kind::kShard) {
      const auto [size, start] = Chunk(Length(runs), n, c);
      runs = Slice(runs, start, size);
    } else {
      EP_CHECK(p.split_factor >= 1, "split factor must be at least 1");
      // The local piece is split_factor torch.chunk pieces; this rank takes its chunk of each.
      const int64_t total = Length(runs);
      Runs out;
      for (int64_t s = 0; s < p.split_factor; ++s) {
        const auto [piece_size, piece_start] = Chunk(total, p.split_factor, s);
        if (piece_size == 0) continue;
        const auto [size, start] = Chunk(piece_size, n, c);
        for (const auto& run : Slice(runs, piece_start + start, size)) out.push_back(run);
      }
      runs = std::move(out);
    }
    if (Length(runs) == 0) emptied[d] = true;
  }
  LocalShard shard;
  for (size_t d = 0; d < global_shape.size(); ++d) {
    const int64_t length = Length(held[d]);
    shard.shape.push_back(length);
    shard.offset.push_back(length == 0 || emptied[d] ? global_shape[d] : held[d].front().first);
  }
  return shard;
}

Json DTensorShardsJson(const Mesh& mesh, const Shape& shape, const std::vector<Placement>& placements) {
  const std::vector<int64_t> global(shape.dims().begin(), shape.dims().end());
  std::vector<LocalShard> shards;
  std::vector<std::vector<int64_t>> ranks;
  std::map<std::pair<std::vector<int64_t>, std::vector<int64_t>>, size_t> index;
  for (int64_t rank = 0; rank < mesh.NumDevices(); ++rank) {
    const std::vector<int64_t> coordinate = mesh.Coordinates(rank);
    LocalShard shard = LocalShapeAndOffset(global, mesh.shape, coordinate, placements);
    auto [it, inserted] = index.emplace(std::make_pair(shard.shape, shard.offset), shards.size());
    if (inserted) {
      shards.push_back(std::move(shard));
      ranks.emplace_back();
    }
    ranks[it->second].push_back(rank);
  }
  Json out = Json::array();
  for (size_t i = 0; i < shards.size(); ++i) {
    Json row = Json::object();
    row["ranks"] = Json(ranks[i]);
    row["local_shape"] = Json(shards[i].shape);
    row["global_offset"] = Json(shards[i].offset);
    out.push_back(std::move(row));
  }
  return out;
}

namespace {

// Marks in `kept` the axes the tensor's spec names and the expert's replica axes: the ones its sub-mesh spans.
void KeepSpecAndReplicaAxes(const Mesh& mesh, const LayoutGroup& group, const PartitionSpec& spec,
                            std::vector<bool>& kept) {
  for (const PartitionSpec::Entry& entry : spec.entries()) {
    for (const std::string& axis : entry) {
      if (std::optional<int> a = mesh.AxisIndex(axis)) kept[static_cast<size_t>(*a)] = true;
    }
  }
  for (const auto& [axis, size] : group.replica_axes) kept[static_cast<size_t>(axis)] = true;
}

// The sub-mesh of the `kept` axes, in mesh order, over the devices `holds` accepts (row-major, as a
// DeviceMesh of those ranks reshaped to the sub-mesh's shape lays them out); one device alone is a
// 1-device mesh named after axis `lone_axis`. nullopt when the devices do not fill the sub-mesh.
template <typename Holds>
std::optional<ExpertSubMesh> SubMeshOf(const Mesh& mesh, const std::vector<bool>& kept, Holds holds, size_t lone_axis) {
  ExpertSubMesh out;
  int64_t product = 1;
  for (size_t a = 0; a < kept.size(); ++a) {
    if (!kept[a]) continue;
    out.mesh.axis_names.push_back(mesh.axis_names[a]);
    out.mesh.shape.push_back(mesh.shape[a]);
    product *= mesh.shape[a];
  }
  for (int64_t d = 0; d < mesh.NumDevices(); ++d) {
    if (holds(d)) out.ranks.push_back(d);
  }
  if (out.mesh.axis_names.empty()) {
    out.mesh.axis_names.push_back(mesh.axis_names[lone_axis]);
    out.mesh.shape.push_back(1);
  }
  if (static_cast<int64_t>(out.ranks.size()) != product) return std::nullopt;
  return out;
}

}  // namespace

std::optional<ExpertSubMesh> ExpertSubMeshOf(const Mesh& mesh, const LayoutGroup& group, const PartitionSpec& spec) {
  // The expert dim's axes are the ones neither the tensor's spec nor its replica axes name; the others
  // span the sub-mesh, over the devices that hold the expert.
  std::vector<bool> kept(mesh.axis_names.size(), false);
  KeepSpecAndReplicaAxes(mesh, group, spec, kept);
  return SubMeshOf(
      mesh, kept, [&](int64_t d) { return group.HeldBy(d); }, mesh.axis_names.size() - 1);
}

std::optional<ExpertSubMesh> StageSubMeshOf(const Mesh& mesh, int pp_axis, const LayoutGroup& group,
                                            const PartitionSpec& spec, int64_t stage) {
  // Every axis but pp; for a per-expert tensor, as ExpertSubMeshOf, the spec's and the replica axes.
  std::vector<bool> kept(mesh.axis_names.size(), !group.expert_layout.has_value());
  if (group.expert_layout) KeepSpecAndReplicaAxes(mesh, group, spec, kept);
  kept[static_cast<size_t>(pp_axis)] = false;
  // One device alone: named after a non-pp axis.
  const size_t lone = pp_axis == 0 && mesh.axis_names.size() > 1 ? 1 : 0;
  return SubMeshOf(
      mesh, kept, [&](int64_t d) { return group.StageOf(d) == stage && group.HeldBy(d); }, lone);
}

namespace {

// Fills `row` with the placements and shards of a tensor distributed on `sub` (a DeviceMesh of some of the
// devices): "device_mesh" with its ranks, then the placements on it and the shards naming global ranks.
// False, with `row` untouched, when plain placements cannot express the spec there (`*reason` says why).
bool PlaceOnSubMesh(const ExpertSubMesh& sub, const PartitionSpec& spec, const Shape& shape, Json& row,
                    std::string* reason) {
  DTensorPlacements on_sub = PlacementsFor(sub.mesh, spec);
  Json mesh = Json::object();
  mesh["mesh_shape"] = Json(sub.mesh.shape);
  mesh["mesh_dim_names"] = Json(sub.mesh.axis_names);
  mesh["ranks"] = Json(sub.ranks);
  if (!on_sub.reason.empty()) {
    *reason = on_sub.reason;
    row["device_mesh"] = std::move(mesh);
    return false;
  }
  row["device_mesh"] = std::move(mesh);
  Json list = Json::array();
  for (const Placement& p : on_sub.placements) list.push_back(p.ToString());
  row["placements"] = std::move(list);
  // Shards name global ranks: sub-mesh rank i is sub.ranks[i].
  Json shards = DTensorShardsJson(sub.mesh, shape, on_sub.placements);
  for (Json& shard : shards) {
    for (Json& rank : shard["ranks"]) rank = sub.ranks[rank.get<size_t>()];
  }
  row["shards"] = std::move(shards);
  return true;
}

void NotExpressible(Json& row, const std::string& reason) {
  row["placements"] = nullptr;
  row["not_expressible"] = reason;
}

// A pipelined tensor's rows, one per stage that keeps it: each on that stage's devices.
void AddStagedRows(const Plan& plan, const ParamPlan& param, const TensorEntry& tensor, int pp_axis, Json& params) {
  const LayoutGroup& group = plan.groups[static_cast<size_t>(param.group)];
  for (int64_t stage : {group.stages.stage, group.stages.also}) {
    if (stage < 0) continue;
    Json row = Json::object();
    row["name"] = tensor.name;
    row["shape"] = Json(std::vector<int64_t>(tensor.shape.dims().begin(), tensor.shape.dims().end()));
    row["stage"] = stage;
    std::string reason;
    if (param.fused_misaligned) {
      reason = FusedMisalignedReason(plan, param);
    } else if (std::optional<ExpertSubMesh> sub = StageSubMeshOf(plan.mesh, pp_axis, group, param.effective, stage)) {
      if (PlaceOnSubMesh(*sub, param.effective, tensor.shape, row, &reason)) {
        params.push_back(std::move(row));
        continue;
      }
    } else {
      reason = fmt::format("the devices of stage {} holding this tensor form no sub-mesh of whole axes", stage);
    }
    NotExpressible(row, reason);
    params.push_back(std::move(row));
  }
}

}  // namespace

StatusOr<std::string> TorchExport(const Plan& plan, const ParamTree& tree, const TorchPipelineOptions& options) {
  Json out = Json::object();
  Json device_mesh = Json::object();
  device_mesh["mesh_shape"] = Json(plan.mesh.shape);
  device_mesh["mesh_dim_names"] = Json(plan.mesh.axis_names);
  out["device_mesh"] = std::move(device_mesh);
  const std::optional<int> pp_axis = plan.mesh.AxisIndex(std::string(kPipelineAxis));
  const bool pipelined = plan.pipeline.pipelined() && pp_axis.has_value();
  if (pipelined) {
    if (options.vocabulary == nullptr) return Status::Internal("TorchExport: a pipelined plan needs the vocabulary");
    EP_ASSIGN_OR_RETURN(out["pipeline"], TorchPipelineJson(plan, tree, *options.vocabulary, options.microbatches));
  }
  std::map<int, Json> shards_of_group;  // tensors of a layout group share their shards
  Json params = Json::array();
  for (const ParamPlan& param : plan.params) {
    const TensorEntry& tensor = tree.tensors[static_cast<size_t>(param.tensor)];
    const LayoutGroup& group = plan.groups[static_cast<size_t>(param.group)];
    if (pipelined && group.Staged()) {
      AddStagedRows(plan, param, tensor, *pp_axis, params);
      continue;
    }
    Json row = Json::object();
    row["name"] = tensor.name;
    row["shape"] = Json(std::vector<int64_t>(tensor.shape.dims().begin(), tensor.shape.dims().end()));
    DTensorPlacements placements = PlacementsFor(plan.mesh, param.effective);
    if (param.fused_misaligned) {
      placements.placements.clear();
      placements.reason = FusedMisalignedReason(plan, param);
    }
    if (placements.reason.empty() && group.expert_layout && group.expert_layout->replicas() != plan.mesh.NumDevices()) {
      // A per-expert tensor lives on the devices holding its expert: a DTensor on that sub-mesh.
      if (std::optional<ExpertSubMesh> sub = ExpertSubMeshOf(plan.mesh, group, param.effective)) {
        if (PlaceOnSubMesh(*sub, param.effective, tensor.shape, row, &placements.reason)) {
          params.push_back(std::move(row));
          continue;
        }
        placements.placements.clear();
      } else {
        placements.placements.clear();
        placements.reason = "this per-expert tensor lives only on the devices holding expert " +
                            std::to_string(group.expert) + ", which form no sub-mesh of whole axes";
      }
    }
    if (!placements.reason.empty()) {
      NotExpressible(row, placements.reason);
    } else {
      Json list = Json::array();
      for (const Placement& p : placements.placements) list.push_back(p.ToString());
      row["placements"] = std::move(list);
      auto it = shards_of_group.find(param.group);
      if (it == shards_of_group.end()) {
        it = shards_of_group.emplace(param.group, DTensorShardsJson(plan.mesh, tensor.shape, placements.placements))
                 .first;
      }
      row["shards"] = it->second;
    }
    params.push_back(std::move(row));
  }
  out["params"] = std::move(params);
  return EmitJson(out);
}

uint64_t TorchExportSizeEstimate(const Plan& plan, const ParamTree& tree) {
  // EmitJson's layout: a rank is one line of a "ranks" array (12 spaces, its digits, ",\n"); each
  // distinct shard is an object of about 136 bytes plus two lines per dim (local_shape, global_offset).
  const int64_t devices = plan.mesh.NumDevices();
  const double digits = static_cast<double>(std::to_string(std::max<int64_t>(devices - 1, 0)).size());
  double bytes = 64.0 * static_cast<double>(plan.mesh.shape.size()) + 128;  // the device mesh
  for (const ParamPlan& param : plan.params) {
    const TensorEntry& tensor = tree.tensors[static_cast<size_t>(param.tensor)];
    const LayoutGroup& group = plan.groups[static_cast<size_t>(param.group)];
    const double dims = static_cast<double>(tensor.shape.rank());
    bytes +=
        96 + static_cast<double>(tensor.name.size()) + 20 * dims + 24.0 * static_cast<double>(plan.mesh.shape.size());
    if (param.fused_misaligned) continue;  // no shards
    int64_t ranks = devices;
    if (group.expert_layout && group.expert_layout->replicas() != devices) ranks = group.expert_layout->replicas();
    const int64_t shards = std::clamp<int64_t>(ranks / std::max<int64_t>(group.layout.replicas(), 1), 1, ranks);
    bytes += static_cast<double>(ranks) * (14.0 + digits) + static_cast<double>(shards) * (136.0 + 2 * dims * 19.0);
  }
  return bytes >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(bytes);
}

}  // namespace easyplan::planner
