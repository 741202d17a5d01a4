#include "api/explain.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <map>
#include <memory>

#include "api/plan_inputs.h"
#include "core/human.h"

namespace easyplan::api {
namespace {

constexpr int kMaxTensorsShown = 20;
constexpr int64_t kMaxBlocksShown = 16;

/// "0-3,8-11": device ids, ranges collapsed.
std::string DeviceList(const std::vector<int64_t>& devices) {
  std::string out;
  for (size_t i = 0; i < devices.size();) {
    size_t j = i;
    while (j + 1 < devices.size() && devices[j + 1] == devices[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j == i ? std::to_string(devices[i]) : fmt::format("{}-{}", devices[i], devices[j]);
    i = j + 1;
  }
  return out;
}

/// Which devices hold which block: one line per distinct slice, at most kMaxBlocksShown.
std::string BlockPicture(const planner::LayoutGroup& group, int64_t devices) {
  std::map<std::vector<planner::Range>, std::vector<int64_t>> holders;
  for (int64_t d = 0; d < devices; ++d) {
    if (!group.HeldBy(d)) continue;
    holders[group.layout.SliceOf(d)].push_back(d);
  }
  std::string out;
  int64_t shown = 0;
  for (const auto& [slice, ids] : holders) {
    if (shown++ == kMaxBlocksShown) {
      out += fmt::format("      ... {} more blocks\n", holders.size() - kMaxBlocksShown);
      break;
    }
    std::vector<std::string> ranges;
    for (const planner::Range& range : slice) ranges.push_back(fmt::format("{}:{}", range.first, range.second));
    out += fmt::format("      [{}] -> device{} {}\n", fmt::join(ranges, ", "), ids.size() == 1 ? "" : "s",
                       DeviceList(ids));
  }
  if (holders.empty()) out += "      held by no device\n";
  return out;
}

std::string ExplainTensor(const PlanInputs& inputs, const planner::Plan& plan, const rules::RuleMatcher& matcher,
                          const planner::ParamPlan& param) {
  const TensorEntry& tensor = inputs.tree->tensors[static_cast<size_t>(param.tensor)];
  const planner::LayoutLink* link =
      inputs.links->empty() ? nullptr : &(*inputs.links)[static_cast<size_t>(param.tensor)];
  const std::string& match_name = link && link->has_counterpart ? link->rule_name : tensor.name;
  std::string out = fmt::format("{}  {} {}\n", tensor.name, tensor.shape.ToString(), DTypeName(tensor.dtype));
  if (link && link->has_counterpart) {
    out += fmt::format("  matched as the {} tensor {} {}{}\n", LayoutName(inputs.rules->layout), link->rule_name,
                       link->rule_shape.ToString(),
                       link->expert >= 0 ? fmt::format(" (expert {} of the stack)", link->expert) : "");
  }
  switch (param.origin) {
    case planner::SpecOrigin::kScalar:
      out += "  rank 0: P() before any rule is tried (eformer match_partition_rules)\n";
      return out;
    case planner::SpecOrigin::kNoCounterpart:
      out += fmt::format("  no counterpart in the {} layout the rules are written for: laid out replicated\n",
                         LayoutName(inputs.rules->layout));
      return out;
    default:
      break;
  }
  const std::vector<int> matches = matcher.AllMatches(match_name);
  const int first = matches.empty() ? -1 : matches.front();
  out += "  rules of EasyDeL " + inputs.model->easydel_version().name + " (first match wins, unanchored search):\n";
  for (size_t r = 0; r < inputs.rules->rules.size(); ++r) {
    const rules::Rule& rule = inputs.rules->rules[r];
    const bool hit = std::find(matches.begin(), matches.end(), static_cast<int>(r)) != matches.end();
    const char* verdict = static_cast<int>(r) == first ? "MATCH" : hit ? "also matches (shadowed here)" : "no match";
    out += fmt::format("    #{:<3} {:<48} {:<28} {}\n", r, "'" + rule.pattern + "'", verdict, rule.loc.ToString());
  }
  if (first < 0) {
    out += "  no rule matches: Partition rule not found for param: " + match_name + "\n";
    return out;
  }
  const rules::Rule& rule = inputs.rules->rules[static_cast<size_t>(first)];
  std::vector<std::string> trace;
  auto resolved = planner::ResolveRuleSpec(rule, *inputs.presets, inputs.config(), nullptr, &trace);
  out += fmt::format("  spec as written: {}\n", rule.spec.text);
  for (const std::string& step : trace) out += "    " + step + "\n";
  if (!rule.note.empty()) out += "  rule note: " + rule.note + "\n";
  if (param.issues.empty()) {
    out += fmt::format("  correction (--uneven {}): none\n", planner::UnevenModeName(plan.uneven));
  } else {
    out += fmt::format("  correction (--uneven {}):\n", planner::UnevenModeName(plan.uneven));
    for (const planner::SpecIssue& issue : param.issues) out += "    " + issue.message + "\n";
  }
  const planner::LayoutGroup& group = plan.groups[static_cast<size_t>(param.group)];
  std::vector<std::string> tiles;
  for (int64_t t : group.layout.tiles()) tiles.push_back(std::to_string(t));
  out += fmt::format("  effective: {} on mesh {}\n", param.effective.ToString(), plan.mesh.ToString());
  out += fmt::format("    tiles per dim [{}], shard {}, {} replica{} per block, {} per device\n",
                     fmt::join(tiles, ", "), group.layout.shard_shape().ToString(), group.Replicas(),
                     group.Replicas() == 1 ? "" : "s", HumanBytesBinary(group.MaxShardBytes()));
  if (group.expert_layout) {
    out +=
        fmt::format("    expert {} lives only on the devices whose slice of the expert dim holds it\n", group.expert);
  }
  out += "    blocks:\n" + BlockPicture(group, plan.mesh.NumDevices());
  return out;
}

}  // namespace

Status CheckExplainPattern(const std::string& pattern_text) {
  if (pattern_text.empty()) return Status::BadInput({}, "PATTERN is required: a regex searched in tensor names");
  RE2 pattern(pattern_text, RE2::Quiet);
  if (!pattern.ok()) {
    return Status::BadInput({}, "PATTERN '" + pattern_text + "' is not a valid regex: " + pattern.error());
  }
  return Status();
}

StatusOr<std::string> Explain(const std::shared_ptr<const Model>& model, const PlanOptions& options,
                              const std::string& pattern) {
  EP_ASSIGN_OR_RETURN(const Checked<PlanOptions> checked, Checked<PlanOptions>::Of(options));
  return Explain(model, checked, pattern);
}

StatusOr<std::string> Explain(const std::shared_ptr<const Model>& model, const Checked<PlanOptions>& options,
                              const std::string& pattern_text) {
  EP_RETURN_IF_ERROR(CheckExplainPattern(pattern_text));  // a valid regex from here on
  RE2 pattern(pattern_text, RE2::Quiet);
  EP_ASSIGN_OR_RETURN(PlanInputs inputs, PreparePlan(model, options));
  EP_ASSIGN_OR_RETURN(planner::Plan plan, inputs.Build());
  EP_ASSIGN_OR_RETURN(std::unique_ptr<rules::RuleMatcher> matcher, rules::RuleMatcher::Build(*inputs.rules));
  std::string out;
  int shown = 0;
  int64_t found = 0;
  for (const planner::ParamPlan& param : plan.params) {
    const TensorEntry& tensor = inputs.tree->tensors[static_cast<size_t>(param.tensor)];
    if (!RE2::PartialMatch(tensor.name, pattern)) continue;
    ++found;
    if (shown == kMaxTensorsShown) continue;
    if (shown++ > 0) out += "\n";
    out += ExplainTensor(inputs, plan, *matcher, param);
  }
  if (found == 0) {
    return Status::BadInput({}, "no tensor name matches '" + pattern_text + "'",
                            {"see the names with `easyplan tree CONFIG` (EasyDeL names use '/', HF names '.')"});
  }
  if (found > shown) out += fmt::format("\n... {} more tensors match; narrow PATTERN to see them\n", found - shown);
  return out;
}

}  // namespace easyplan::api
