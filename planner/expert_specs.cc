#include "planner/expert_specs.h"

#include <fmt/format.h>

#include "planner/logical_check.h"
#include "planner/runtime_modes.h"
#include "rules/rule_set.h"

namespace easyplan::planner {

StatusOr<std::optional<ExpertSpecs>> GetExpertSpecs(const ActivationTable& table, const rules::Presets& presets,
                                                    const Json& config, int64_t experts,
                                                    const ExpertMesh& expert_mesh) {
  if (experts <= 0) return std::optional<ExpertSpecs>();
  ExpertSpecs specs;
  specs.experts = experts;
  auto etm = config.find("use_expert_tensor_mode");
  specs.expert_tensor_mode = etm != config.end() && etm->is_boolean() && etm->get<bool>();
  rules::SpecSource column;
  column.preset = "MoEColumnWise";
  rules::SpecSource row;
  row.preset = "MoERowWise";
  EP_ASSIGN_OR_RETURN(specs.column, presets.Resolve(column, config, Mode::kTrain));
  EP_ASSIGN_OR_RETURN(specs.row, presets.Resolve(row, config, Mode::kTrain));
  const std::string tp = ParallelAxisNamesOf(config).tp;
  // ED-HEAD biases: (place, tp) for both directions; (tp, None) in expert-tensor mode.
  const PartitionSpec::Entry place = specs.column.size() > 0 ? specs.column[0] : PartitionSpec::Entry{};
  specs.bias = specs.expert_tensor_mode ? PartitionSpec(std::vector<PartitionSpec::Entry>{{tp}, {}})
                                        : PartitionSpec(std::vector<PartitionSpec::Entry>{place, {tp}});
  for (const ActivationTable::FusedEntry& entry : table.fused()) {
    std::vector<PartitionSpec::Entry> entries;
    for (const std::optional<std::string>& role : specs.expert_tensor_mode ? entry.expert_tensor : entry.standard) {
      if (!role) {
        entries.emplace_back();
        continue;
      }
      const int group = *role == "dp" ? ExpertMesh::kDp : *role == "ep" ? ExpertMesh::kEp : ExpertMesh::kTp;
      entries.push_back({expert_mesh.axis_names[static_cast<size_t>(group)]});
    }
    specs.fused.emplace_back(entry.name, PartitionSpec(std::move(entries)));
  }
  EP_ASSIGN_OR_RETURN(specs.model_output,
                      ResolveAxes(table.model_output(specs.expert_tensor_mode), presets, config, Mode::kTrain));
  return std::optional<ExpertSpecs>(std::move(specs));
}

std::vector<Finding> ExpertMeshFindings(const ExpertMesh& expert_mesh, const std::optional<ExpertSpecs>& specs) {
  std::vector<Finding> findings;
  if (!specs) return findings;
  auto add = [&](std::string message, std::vector<std::string> notes) {
    Finding finding;
    finding.code = FindingCode::kExpertMesh;
    finding.severity = FindingSeverity(finding.code);
    finding.message = std::move(message);
    finding.tensor = "expert_mesh";
    finding.notes = std::move(notes);
    findings.push_back(std::move(finding));
  };
  if (!expert_mesh.Covers()) {
    add(fmt::format("expert_mesh: the folded (dp, ep, tp) mesh ({}) has {} devices but the model mesh has {}, so "
                    "EasyDeL cannot reshape the devices into it",
                    expert_mesh.ToString(), expert_mesh.NumDevices(), expert_mesh.model_devices),
        {"every mesh axis must be one of partition_axis's data, fsdp, expert, tensor and sequence axes"});
    return findings;
  }
  if (specs->expert_tensor_mode && expert_mesh.shape[ExpertMesh::kTp] != 1) {
    add(fmt::format("expert_mesh: use_expert_tensor_mode needs the expert mesh's tp size to be 1, but it is {} ({}); "
                    "EasyDeL raises ValueError",
                    expert_mesh.shape[ExpertMesh::kTp], expert_mesh.ToString()),
        {"set the tensor-parallel axis to 1, or turn use_expert_tensor_mode off"});
  }
  const int group = specs->expert_tensor_mode ? ExpertMesh::kTp : ExpertMesh::kEp;
  const int64_t shards = expert_mesh.shape[static_cast<size_t>(group)];
  if (shards > 1 && specs->experts % shards != 0) {
    add(fmt::format("expert_mesh: {} experts cannot be dealt to the folded {} axis of size {} (from {}); the fused "
                    "MoE shard_map needs an even split",
                    specs->experts, expert_mesh.axis_names[static_cast<size_t>(group)], shards,
                    fmt::join(expert_mesh.members[static_cast<size_t>(group)], " x ")),
        {fmt::format("valid folded sizes: {}", NearestDivisorsText(specs->experts, shards))});
  }
  return findings;
}

}  // namespace easyplan::planner
