#include "cli/plan_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "cli/activations_format.h"
#include "cli/json_text.h"
#include "cli/text_table.h"
#include "core/human.h"
#include "core/json.h"

namespace easyplan::cli {
namespace {

using planner::Finding;
using planner::FindingCode;
using planner::LayoutGroup;
using planner::ParamPlan;
using planner::Plan;

std::string_view SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kNote:
      return "note";
  }
  return "error";
}

std::string_view OriginName(planner::SpecOrigin origin) {
  switch (origin) {
    case planner::SpecOrigin::kRule:
      return "rule";
    case planner::SpecOrigin::kScalar:
      return "scalar";
    case planner::SpecOrigin::kUnmatched:
      return "unmatched";
    case planner::SpecOrigin::kNoCounterpart:
      return "no-counterpart";
  }
  return "rule";
}

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

std::string MoreTensors(int64_t count) {
  return count > 1 ? fmt::format(" (and {} more tensor{})", count - 1, count == 2 ? "" : "s") : "";
}

std::string FindingLine(const Finding& finding) {
  std::string where = finding.loc.ToString();
  std::string count = MoreTensors(finding.count);
  return fmt::format("{}{}: {}{} [{}]", where, where.empty() ? "easyplan" : "", SeverityName(finding.severity),
                     ": " + finding.message + count, planner::FindingCodeName(finding.code));
}

}  // namespace

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

std::string FindingJson(const Finding& finding) {
  std::string out =
      fmt::format("{{\"code\": \"{}\", \"severity\": \"{}\", \"message\": {}", planner::FindingCodeName(finding.code),
                  SeverityName(finding.severity), Quoted(finding.message));
  if (!finding.tensor.empty()) out += ", \"tensor\": " + Quoted(finding.tensor);
  if (finding.count > 0) out += fmt::format(", \"count\": {}", finding.count);
  if (finding.rule >= 0) out += fmt::format(", \"rule\": {}", finding.rule);
  if (!finding.loc.file.empty()) out += ", \"file\": " + Quoted(finding.loc.file);
  if (finding.loc.line > 0) out += fmt::format(", \"line\": {}", finding.loc.line);
  if (!finding.notes.empty()) {
    std::vector<std::string> notes;
    for (const std::string& note : finding.notes) notes.push_back(Quoted(note));
    out += fmt::format(", \"notes\": [{}]", fmt::join(notes, ", "));
  }
  return out + "}";
}

std::string PlanToJsonText(const PlanView& view) {
  const Plan& plan = *view.plan;
  const ParamTree& tree = *view.tree;
  std::string out = "{\n";
  out += "  \"model_type\": " + Quoted(tree.model_type) + ",\n";
  out += "  \"layout\": \"" + std::string(LayoutName(tree.layout)) + "\",\n";
  out += "  \"mesh\": " + MeshJson(plan.mesh) + ",\n";
  out += "  \"uneven\": \"" + std::string(planner::UnevenModeName(plan.uneven)) + "\",\n";
  out += "  \"rules\": {\"source\": " + Quoted(view.rules->source) + ", \"layout\": \"" +
         std::string(LayoutName(view.rules->layout)) + "\", \"count\": " + std::to_string(view.rules->rules.size()) +
         "},\n";
  if (view.expert_mesh && view.expert_specs) out += ExpertJsonMembers(*view.expert_mesh, *view.expert_specs);
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
      if (view.device) {
        std::vector<std::string> ranges;
        const bool held = group.HeldBy(*view.device);
        for (const planner::Range& range : group.layout.SliceOf(*view.device)) {
          ranges.push_back(fmt::format("[{}, {}]", range.first, range.second));
        }
        if (!held) {
          out += ", \"slice\": null, \"replica_id\": null";
        } else {
          out += fmt::format(", \"slice\": [{}], \"replica_id\": {}", fmt::join(ranges, ", "),
                             group.ReplicaIdOn(*view.device, plan.mesh));
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
  int errors = 0, warnings = 0;
  for (const Finding& finding : plan.findings) {
    errors += finding.severity == Severity::kError;
    warnings += finding.severity == Severity::kWarning;
  }
  out += fmt::format(
      "  \"summary\": {{\"tensors\": {}, \"total_bytes\": {}, \"layout_groups\": {}, \"min_bytes_per_device\": {}, "
      "\"median_bytes_per_device\": {}, \"max_bytes_per_device\": {}, \"worst_device\": {}, "
      "\"errors\": {}, \"warnings\": {}}},\n",
      tree.tensors.size(), tensor_bytes, plan.groups.size(), summary.min, summary.median, summary.max,
      summary.worst_device, errors, warnings);
  out += "  \"findings\": [";
  bool first = true;
  for (const Finding& finding : plan.findings) {
    out += first ? "\n    " : ",\n    ";
    first = false;
    out += FindingJson(finding);
  }
  out += first ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

std::string PlanToTable(const PlanView& view) {
  const Plan& plan = *view.plan;
  const ParamTree& tree = *view.tree;
  std::string out;
  if (!view.summary_only) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> header = {"tensor", "shape", "dtype", "rule", "spec", "shard", "replicas", "bytes/device"};
    if (view.device) {
      header.push_back("slice on " + std::to_string(*view.device));
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
      if (view.device) {
        if (!group.HeldBy(*view.device)) {
          row.push_back("-");
          row.push_back("-");
        } else {
          std::vector<std::string> ranges;
          for (const planner::Range& range : group.layout.SliceOf(*view.device)) {
            ranges.push_back(fmt::format("{}:{}", range.first, range.second));
          }
          row.push_back("[" + fmt::format("{}", fmt::join(ranges, ", ")) + "]");
          row.push_back(std::to_string(group.ReplicaIdOn(*view.device, plan.mesh)));
        }
      }
      rows.push_back(std::move(row));
    }
    out += Columns(rows, {6, 7});
  }
  const DeviceSummary summary = SummarizeDevices(plan.device_bytes);
  out += fmt::format("mesh {} ({} devices), rules {} ({} rules), uneven dims: {}\n", plan.mesh.ToString(),
                     WithThousands(plan.mesh.NumDevices()), view.rules->source, view.rules->rules.size(),
                     planner::UnevenModeName(plan.uneven));
  out +=
      fmt::format("{} tensors in {} layout groups; per device: min {}, median {}, max {} (device {})\n",
                  WithThousands(static_cast<int64_t>(tree.tensors.size())), plan.groups.size(), HumanBytes(summary.min),
                  HumanBytes(summary.median), HumanBytes(summary.max), summary.worst_device);
  if (view.expert_mesh && view.expert_specs) out += ExpertTableLines(*view.expert_mesh, *view.expert_specs);
  return out;
}

std::string FindingsToText(const std::vector<Finding>& findings) {
  std::string out;
  int errors = 0, warnings = 0, notes = 0;
  for (const Finding& finding : findings) {
    out += FindingLine(finding) + "\n";
    for (const std::string& note : finding.notes) out += "  note: " + note + "\n";
    errors += finding.severity == Severity::kError;
    warnings += finding.severity == Severity::kWarning;
    notes += finding.severity == Severity::kNote;
  }
  out += fmt::format("{} error{}, {} warning{}, {} note{}\n", errors, errors == 1 ? "" : "s", warnings,
                     warnings == 1 ? "" : "s", notes, notes == 1 ? "" : "s");
  return out;
}

std::string FindingsToJsonText(const std::vector<Finding>& findings, const std::string& summary_key_json) {
  std::string out = "{\n";
  if (!summary_key_json.empty()) out += summary_key_json;
  out += "  \"findings\": [";
  bool first = true;
  for (const Finding& finding : findings) {
    out += first ? "\n    " : ",\n    ";
    first = false;
    out += FindingJson(finding);
  }
  out += first ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

std::string FindingsToJunit(const std::vector<Finding>& findings, bool strict) {
  // One test case per check, so a dashboard shows every check passing or failing across runs.
  constexpr FindingCode kCodes[] = {
      FindingCode::kUnmatchedTensor, FindingCode::kUnknownAxis,    FindingCode::kDuplicateAxis,
      FindingCode::kIndivisible,     FindingCode::kOverBudget,     FindingCode::kLogicalIndivisible,
      FindingCode::kTruncatedSpec,   FindingCode::kUnevenReplaced, FindingCode::kUnevenChunked,
      FindingCode::kDeadRule,        FindingCode::kShadowedRule,   FindingCode::kLargeReplicated,
      FindingCode::kNoCounterpart,   FindingCode::kExpertMesh,     FindingCode::kCacheReshard,
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

std::string FindingsToGithub(const std::vector<Finding>& findings) {
  std::string out;
  for (const Finding& finding : findings) {
    const char* command = finding.severity == Severity::kError     ? "error"
                          : finding.severity == Severity::kWarning ? "warning"
                                                                   : "notice";
    std::string properties;
    if (!finding.loc.file.empty()) properties += "file=" + EscapeGithubProperty(finding.loc.file) + ",";
    if (finding.loc.line > 0) properties += "line=" + std::to_string(finding.loc.line) + ",";
    properties += "title=" + EscapeGithubProperty(std::string(planner::FindingCodeName(finding.code)));
    std::string message = finding.message;
    message += MoreTensors(finding.count);
    for (const std::string& note : finding.notes) message += "\n" + note;
    out += fmt::format("::{} {}::{}\n", command, properties, EscapeGithubData(message));
  }
  return out;
}

}  // namespace easyplan::cli
