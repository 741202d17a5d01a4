#include "api/findings_json.h"

#include <fmt/format.h>

#include <optional>

#include "api/json_text.h"
#include "api/plan_json.h"
#include "core/json_parse.h"

namespace easyplan::api {

using planner::Finding;

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

Json FindingsJsonArray(const std::vector<Finding>& findings) {
  Json out = Json::array();
  for (const Finding& f : findings) {
    std::optional<Json> value = ParseJsonValue(FindingJson(f));
    EP_CHECK(value.has_value(), "FindingJson wrote invalid JSON");
    out.push_back(std::move(*value));
  }
  return out;
}

SeverityCounts CountSeverities(const std::vector<Finding>& findings) {
  SeverityCounts counts;
  for (const Finding& finding : findings) {
    counts.errors += finding.severity == Severity::kError;
    counts.warnings += finding.severity == Severity::kWarning;
  }
  return counts;
}

std::string ClosingFindingsJson(const std::vector<Finding>& findings) {
  std::string out = "  \"findings\": [";
  bool first = true;
  for (const Finding& finding : findings) {
    out += first ? "\n    " : ",\n    ";
    first = false;
    out += FindingJson(finding);
  }
  out += first ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

std::string FindingsToJsonText(const std::vector<Finding>& findings, const std::string& summary_key_json) {
  return "{\n" + summary_key_json + ClosingFindingsJson(findings);
}

}  // namespace easyplan::api
