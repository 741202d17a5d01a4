#include "api/plan_json.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/activations_json.h"
#include "api/findings_json.h"
#include "api/json_text.h"
#include "core/enum_table.h"
#include "core/human.h"
#include "core/json_parse.h"

namespace easyplan::api {
namespace {

using planner::Finding;
using planner::LayoutGroup;
using planner::ParamPlan;
using planner::Plan;

// Where a tensor's spec came from, as the plan JSON's "origin" says.
constexpr EnumName<planner::SpecOrigin> kOriginNames[] = {
    {planner::SpecOrigin::kRule, "rule"},
    {planner::SpecOrigin::kScalar, "scalar"},
    {planner::SpecOrigin::kUnmatched, "unmatched"},
    {planner::SpecOrigin::kNoCounterpart, "no-counterpart"},
};

std::string_view OriginName(planner::SpecOrigin origin) { return NameOf(kOriginNames, origin); }

// The severities as JSON and text reports write them.
constexpr EnumName<Severity> kSeverityNames[] = {
    {Severity::kError, "error"},
    {Severity::kWarning, "warning"},
    {Severity::kNote, "note"},
};

}  // namespace

std::string_view SeverityName(Severity severity) { return NameOf(kSeverityNames, severity); }

DeviceSummary SummarizeDevices(const std::vector<int64_t>& device_bytes) {
  DeviceSummary summary;
  if (device_bytes.empty()) return summary;
  const auto min_it = std::min_element(device_bytes.begin(), device_bytes.end());
  const auto max_it = std::max_element(device_bytes.begin(), device_bytes.end());  // the first worst device
  summary.min = *min_it;
  summary.max = *max_it;
  summary.worst_device = max_it - device_bytes.begin();
  std::vector<int64_t> sorted = device_bytes;
  const size_t mid = (sorted.size() - 1) / 2;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<ptrdiff_t>(mid), sorted.end());
  summary.median = sorted[mid];
  for (int64_t bytes : device_bytes) {
    if (__builtin_add_overflow(summary.total, bytes, &summary.total)) summary.total = INT64_MAX;
  }
  return summary;
}

Json PipelineSplitJson(const planner::PipelineSplit& split) {
  Json out = Json::object();
  out["stages"] = split.stages;
  out["schedule"] = std::string(planner::PipelineScheduleName(split.schedule));
  out["virtual_stages"] = split.virtual_stages;
  out["layers"] = split.chunk_layers;
  return out;
}

std::string PlanToJsonText(const PlanView& view) {
  const Plan& plan = *view.plan;
  const ParamTree& tree = *view.tree;
  std::string out = "{\n";
  out += "  \"model_type\": " + Quoted(tree.model_type) + ",\n";
  if (!view.easydel_version.empty()) out += "  \"easydel_version\": " + Quoted(view.easydel_version) + ",\n";
  out += "  \"layout\": \"" + std::string(LayoutName(tree.layout)) + "\",\n";
  out += "  \"mesh\": " + MeshJson(plan.mesh) + ",\n";
  out += "  \"uneven\": \"" + std::string(planner::UnevenModeName(plan.uneven)) + "\",\n";
  out += "  \"rules\": {\"source\": " + Quoted(view.rules->source) + ", \"layout\": \"" +
         std::string(LayoutName(view.rules->layout)) + "\", \"count\": " + std::to_string(view.rules->rules.size()) +
         "},\n";
  if (view.expert_mesh && view.expert_specs) out += ExpertJsonMembers(*view.expert_mesh, *view.expert_specs);
  if (plan.pipeline.pipelined()) {
    Json pipeline = PipelineSplitJson(plan.pipeline);
    pipeline["bytes_per_device_by_stage"] = plan.StageBytes();
    if (plan.pipeline.balanced_by_us) pipeline["assumed"] = plan.pipeline.how;
    out += "  \"pipeline\": " + pipeline.dump(-1, ' ', false, Json::error_handler_t::replace) + ",\n";
  }
  if (!view.summary_only) {
    out += "  \"params\": [";
    bool first = true;
    for (const ParamPlan& param : plan.params) {
      const TensorEntry& tensor = tree.tensors[static_cast<size_t>(param.tensor)];
      const LayoutGroup& group = plan.groups[static_cast<size_t>(param.group)];
      out += first ? "\n    " : ",\n    ";
      first = false;
      out += fmt::format("{{\"name\": {}, \"shape\": {}, \"dtype\": \"{}\", ", Quoted(tensor.name),
                         DimsJson(tensor.shape.dims()), DTypeName(tensor.dtype));
      if (param.origin == planner::SpecOrigin::kRule) {
        const rules::Rule& rule = view.rules->rules[static_cast<size_t>(param.rule)];
        out += fmt::format(
            "\"rule\": {{\"index\": {}, \"match\": {}, \"source\": {}, \"spec\": {}}}, ", param.rule,
            Quoted(rule.pattern), Quoted(rule.loc.ToString()),
            Quoted(param.rule_case >= 0 ? rule.cases[static_cast<size_t>(param.rule_case)].spec.text : rule.spec.text));
      } else {
        out += fmt::format("\"rule\": null, \"origin\": \"{}\", ", OriginName(param.origin));
      }
      out += fmt::format(
          "\"spec\": {}, \"effective_spec\": {}, \"shard_shape\": {}, \"replicas\": {}, "
          "\"bytes_per_device\": {}",
          SpecJson(param.spec), SpecJson(param.effective), DimsJson(group.layout.shard_shape().dims()),
          group.Replicas(), group.MaxShardBytes());
      if (group.expert_layout) out += fmt::format(", \"expert\": {}", group.expert);
      if (group.Staged()) {
        out += fmt::format(", \"stages\": [{}{}]", group.stages.stage,
                           group.stages.also >= 0 ? fmt::format(", {}", group.stages.also) : std::string());
      }
      if (view.rank) {
        std::vector<std::string> ranges;
        const bool held = group.HeldBy(*view.rank);
        for (const planner::Range& range : group.layout.SliceOf(*view.rank)) {
          ranges.push_back(fmt::format("[{}, {}]", range.first, range.second));
        }
        if (!held) {
          out += ", \"slice\": null, \"replica_id\": null";
        } else {
          out += fmt::format(", \"slice\": [{}], \"replica_id\": {}", fmt::join(ranges, ", "),
                             group.ReplicaIdOn(*view.rank, plan.mesh));
        }
      }
      out += "}";
    }
    out += first ? "],\n" : "\n  ],\n";
    out += "  \"devices\": [";
    first = true;
    for (size_t d = 0; d < plan.device_bytes.size(); ++d) {
      out += first ? "\n    " : ",\n    ";
      first = false;
      out += fmt::format("{{\"id\": {}, \"bytes\": {}}}", d, plan.device_bytes[d]);
    }
    out += first ? "],\n" : "\n  ],\n";
  }
  const DeviceSummary summary = SummarizeDevices(plan.device_bytes);
  int64_t tensor_bytes = 0;
  for (const TensorEntry& tensor : tree.tensors) {
    const int64_t bytes = ByteSize(tensor.shape.NumElements().value_or(0), DTypeBits(tensor.dtype)).value_or(0);
    if (__builtin_add_overflow(tensor_bytes, bytes, &tensor_bytes)) tensor_bytes = INT64_MAX;
  }
  const SeverityCounts counts = CountSeverities(plan.findings);
  out += fmt::format(
      "  \"summary\": {{\"tensors\": {}, \"total_bytes\": {}, \"layout_groups\": {}, \"min_bytes_per_device\": {}, "
      "\"median_bytes_per_device\": {}, \"max_bytes_per_device\": {}, \"worst_device\": {}, "
      "\"errors\": {}, \"warnings\": {}}},\n",
      tree.tensors.size(), tensor_bytes, plan.groups.size(), summary.min, summary.median, summary.max,
      summary.worst_device, counts.errors, counts.warnings);
  return out + ClosingFindingsJson(plan.findings);
}

}  // namespace easyplan::api
