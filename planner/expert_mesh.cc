#include "planner/expert_mesh.h"

#include <fmt/format.h>

#include <algorithm>

namespace easyplan::planner {
namespace {

std::string StringField(const Json& object, const char* key, const std::string& fallback) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}

bool BoolField(const Json& object, const char* key, bool fallback) {
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

}  // namespace

ParallelAxisNames ParallelAxisNamesOf(const Json& config) {
  ParallelAxisNames names;
  auto paxis = config.find("partition_axis");
  if (paxis == config.end() || !paxis->is_object()) return names;
  names.dp = StringField(*paxis, "data_parallel_axis", names.dp);
  names.fsdp = StringField(*paxis, "fully_sharded_data_parallel_axis", names.fsdp);
  names.ep = StringField(*paxis, "expert_parallel_axis", names.ep);
  names.tp = StringField(*paxis, "tensor_parallel_axis", names.tp);
  names.sp = StringField(*paxis, "sequence_parallel_axis", names.sp);
  return names;
}

ExpertBinding ExpertBindingOf(const Json& config) {
  return ExpertBinding{BoolField(config, "fsdp_is_ep_bound", true), BoolField(config, "sp_is_ep_bound", true)};
}

bool ExpertMesh::Covers() const { return NumDevices() == model_devices; }

std::string ExpertMesh::ToString() const {
  return fmt::format("{}={}, {}={}, {}={}", axis_names[0], shape[0], axis_names[1], shape[1], axis_names[2], shape[2]);
}

ExpertMesh FoldExpertMesh(const Mesh& mesh, const ParallelAxisNames& names, ExpertBinding binding) {
  ExpertMesh expert;
  expert.axis_names = {names.dp, names.ep, names.tp};
  expert.model_devices = mesh.NumDevices();
  const std::pair<const std::string*, int> order[] = {
      {&names.tp, ExpertMesh::kTp},
      {&names.ep, ExpertMesh::kEp},
      {&names.dp, ExpertMesh::kDp},
      {&names.fsdp, binding.fsdp_is_ep_bound ? ExpertMesh::kEp : ExpertMesh::kDp},
      {&names.sp, binding.sp_is_ep_bound ? ExpertMesh::kEp : ExpertMesh::kDp},
  };
  std::vector<std::string> placed;
  for (const auto& [name, group] : order) {
    if (std::find(placed.begin(), placed.end(), *name) != placed.end()) continue;
    placed.push_back(*name);
    const std::optional<int> index = mesh.AxisIndex(*name);
    if (!index) continue;  // missing from the mesh: size 1
    expert.shape[static_cast<size_t>(group)] *= mesh.shape[static_cast<size_t>(*index)];
    expert.members[static_cast<size_t>(group)].push_back(*name);
  }
  return expert;
}

}  // namespace easyplan::planner
