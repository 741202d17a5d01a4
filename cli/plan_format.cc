#include "cli/plan_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "api/json_text.h"
#include "api/plan_json.h"
#include "cli/activations_format.h"
#include "cli/text_table.h"
#include "core/human.h"
#include "core/json.h"

namespace easyplan::cli {
namespace {

using api::FindingLine;
using api::MoreTensors;
using api::SeverityName;

using planner::Finding;
using planner::FindingCode;
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

std::string EscapeXml(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 forbids most control characters even escaped.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') {
          out += '?';
        } else {
          out += c;
        }
    }
  }
  return out;
}

// GitHub workflow-command escaping: data escapes %, CR, LF; properties also ':' and ','.
std::string EscapeGithubData(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '%')
      out += "%25";
    else if (c == '\r')
      out += "%0D";
    else if (c == '\n')
      out += "%0A";
    else
      out += c;
  }
  return out;
}
std::string EscapeGithubProperty(const std::string& text) {
  std::string out;
  for (char c : EscapeGithubData(text)) {
    if (c == ':')
      out += "%3A";
    else if (c == ',')
      out += "%2C";
    else
      out += c;
  }
  return out;
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

std::string FindingsToJunit(const std::vector<Finding>& findings, bool strict) {
  // One test case per check, so a dashboard shows every check passing or failing across runs.
  constexpr FindingCode kCodes[] = {
      FindingCode::kUnmatchedTensor,      FindingCode::kUnknownAxis,
      FindingCode::kDuplicateAxis,        FindingCode::kIndivisible,
      FindingCode::kOverBudget,           FindingCode::kLogicalIndivisible,
      FindingCode::kTruncatedSpec,        FindingCode::kUnevenReplaced,
      FindingCode::kUnevenChunked,        FindingCode::kDeadRule,
      FindingCode::kShadowedRule,         FindingCode::kLargeReplicated,
      FindingCode::kNoCounterpart,        FindingCode::kExpertMesh,
      FindingCode::kCacheReshard,         FindingCode::kRedundantCompute,
      FindingCode::kVocabReplicated,      FindingCode::kFusedMisaligned,
      FindingCode::kPipelineMicrobatches, FindingCode::kPipelineImbalance,
      FindingCode::kContextLength,        FindingCode::kFitsNoDevice,
  };
  std::map<FindingCode, std::vector<const Finding*>> by_code;
  for (const Finding& finding : findings) by_code[finding.code].push_back(&finding);
  int failures = 0;
  std::string cases;
  for (FindingCode code : kCodes) {
    const std::string name(planner::FindingCodeName(code));
    const auto& found = by_code[code];
    const Severity severity = planner::FindingSeverity(code);
    const bool fails = !found.empty() && (severity == Severity::kError || (strict && severity == Severity::kWarning));
    cases += fmt::format("    <testcase classname=\"easyplan.validate\" name=\"{}\"", name);
    if (found.empty()) {
      cases += "/>\n";
      continue;
    }
    cases += ">\n";
    std::string body;
    for (const Finding* finding : found) body += FindingLine(*finding) + "\n";
    if (fails) {
      ++failures;
      cases += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n",
                           EscapeXml(found.front()->message), name, EscapeXml(body));
    } else {
      cases += fmt::format("      <system-out>{}</system-out>\n", EscapeXml(body));
    }
    cases += "    </testcase>\n";
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"easyplan\" tests=\"{}\" failures=\"{}\">\n", std::size(kCodes), failures);
  out += fmt::format("  <testsuite name=\"easyplan validate\" tests=\"{}\" failures=\"{}\" errors=\"0\">\n",
                     std::size(kCodes), failures);
  out += cases;
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

std::string FindingsToGithub(const std::vector<Finding>& findings, const std::string& builtin_rules,
                             const std::string& config_file) {
  std::string out;
  for (const Finding& finding : findings) {
    const char* command = finding.severity == Severity::kError     ? "error"
                          : finding.severity == Severity::kWarning ? "warning"
                                                                   : "notice";
    // GitHub drops an annotation whose file the repository lacks: a built-in rule's file is
    // easyplan's, so its findings point at the user's config (line 1) and name the rule instead.
    SourceLoc loc = finding.loc;
    std::string prefix;
    if (!builtin_rules.empty() && loc.file == builtin_rules) {
      prefix = "built-in rule " + loc.ToString() + ": ";
      loc = config_file.empty() ? SourceLoc{} : SourceLoc{config_file, "", 1, 0};
    }
    std::string properties;
    if (!loc.file.empty()) properties += "file=" + EscapeGithubProperty(loc.file) + ",";
    if (loc.line > 0) properties += "line=" + std::to_string(loc.line) + ",";
    properties += "title=" + EscapeGithubProperty(std::string(planner::FindingCodeName(finding.code)));
    std::string message = prefix + finding.message;
    message += MoreTensors(finding.count);
    for (const std::string& note : finding.notes) message += "\n" + note;
    out += fmt::format("::{} {}::{}\n", command, properties, EscapeGithubData(message));
  }
  return out;
}

}  // namespace easyplan::cli
