#include "api/plan_text.h"

#include <fmt/format.h>

#include "api/activations_text.h"
#include "api/text_table.h"
#include "core/human.h"

namespace easyplan::api {
namespace {

using planner::LayoutGroup;
using planner::ParamPlan;
using planner::Plan;

std::string RuleLabel(const ParamPlan& param) {
  switch (param.origin) {
    case planner::SpecOrigin::kRule:
      return "#" + std::to_string(param.rule);
    case planner::SpecOrigin::kScalar:
      return "scalar";
    case planner::SpecOrigin::kUnmatched:
      return "NONE";
    case planner::SpecOrigin::kNoCounterpart:
      return "-";
  }
  return "";
}

}  // namespace

std::string PlanToTable(const PlanView& view) {
  const Plan& plan = *view.plan;
  const ParamTree& tree = *view.tree;
  std::string out;
  if (!view.summary_only) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> header = {"tensor", "shape", "dtype", "rule", "spec", "shard", "replicas", "bytes/device"};
    if (view.rank) {
      header.push_back("slice on " + std::to_string(*view.rank));
      header.push_back("replica");
    }
    rows.push_back(header);
    for (const ParamPlan& param : plan.params) {
      const TensorEntry& tensor = tree.tensors[static_cast<size_t>(param.tensor)];
      const LayoutGroup& group = plan.groups[static_cast<size_t>(param.group)];
      std::string spec = param.effective.ToString();
      if (!(param.spec == param.effective) && param.origin == planner::SpecOrigin::kRule) {
        spec = param.spec.ToString() + " -> " + spec;
      }
      std::vector<std::string> row = {tensor.name,
                                      tensor.shape.ToString(),
                                      std::string(DTypeName(tensor.dtype)),
                                      RuleLabel(param),
                                      spec,
                                      group.layout.shard_shape().ToString(),
                                      WithThousands(group.Replicas()),
                                      WithThousands(group.MaxShardBytes())};
      if (view.rank) {
        if (!group.HeldBy(*view.rank)) {
          row.push_back("-");
          row.push_back("-");
        } else {
          std::vector<std::string> ranges;
          for (const planner::Range& range : group.layout.SliceOf(*view.rank)) {
            ranges.push_back(fmt::format("{}:{}", range.first, range.second));
          }
          row.push_back("[" + fmt::format("{}", fmt::join(ranges, ", ")) + "]");
          row.push_back(std::to_string(group.ReplicaIdOn(*view.rank, plan.mesh)));
        }
      }
      rows.push_back(std::move(row));
    }
    out += Columns(rows, {6, 7});
  }
  const DeviceSummary summary = SummarizeDevices(plan.device_bytes);
  if (!view.easydel_version.empty()) out += "EasyDeL " + view.easydel_version + ", ";
  out += fmt::format("mesh {} ({} devices), rules {} ({} rules), uneven dims: {}\n", plan.mesh.ToString(),
                     WithThousands(plan.mesh.NumDevices()), view.rules->source, view.rules->rules.size(),
                     planner::UnevenModeName(plan.uneven));
  out += fmt::format("{} tensors in {} layout groups; per device: min {}, median {}, max {} (device {})\n",
                     WithThousands(static_cast<int64_t>(tree.tensors.size())), plan.groups.size(),
                     HumanBytesBinary(summary.min), HumanBytesBinary(summary.median), HumanBytesBinary(summary.max),
                     summary.worst_device);
  if (plan.pipeline.pipelined()) {
    const std::vector<int64_t> stage_bytes = plan.StageBytes();
    std::vector<std::string> layers, bytes;
    for (int64_t s = 0; s < plan.pipeline.stages; ++s) {
      layers.push_back(std::to_string(plan.pipeline.LayerCount(s)));
      bytes.push_back(HumanBytesBinary(stage_bytes[static_cast<size_t>(s)]));
    }
    out +=
        fmt::format("pipeline: {} stages, {} schedule{}; layers per stage {}; bytes per device by stage {}\n",
                    plan.pipeline.stages, planner::PipelineScheduleName(plan.pipeline.schedule),
                    plan.pipeline.virtual_stages > 1 ? fmt::format(" x {} virtual stages", plan.pipeline.virtual_stages)
                                                     : std::string(),
                    fmt::join(layers, ", "), fmt::join(bytes, ", "));
    if (plan.pipeline.balanced_by_us) out += "assumed " + plan.pipeline.how + "\n";
  }
  if (!view.weights.empty()) out += "weights: " + view.weights + "\n";
  if (view.expert_mesh && view.expert_specs) out += ExpertTableLines(*view.expert_mesh, *view.expert_specs);
  return out;
}

}  // namespace easyplan::api
