#include "api/findings_text.h"

#include <fmt/format.h>

#include "api/plan_json.h"

namespace easyplan::api {

using planner::Finding;

std::string MoreTensors(int64_t count) {
  return count > 1 ? fmt::format(" (and {} more tensor{})", count - 1, count == 2 ? "" : "s") : "";
}

std::string FindingLine(const Finding& finding) {
  std::string where = finding.loc.ToString();
  std::string count = MoreTensors(finding.count);
  return fmt::format("{}{}: {}{} [{}]", where, where.empty() ? "easyplan" : "", SeverityName(finding.severity),
                     ": " + finding.message + count, planner::FindingCodeName(finding.code));
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

bool IsBuiltinRuleNote(const Finding& finding) {
  return finding.severity == Severity::kNote &&
         (finding.code == planner::FindingCode::kDeadRule || finding.code == planner::FindingCode::kShadowedRule);
}

std::string FindingsForTerminal(const std::vector<Finding>& findings, bool verbose) {
  if (verbose) return FindingsToText(findings);
  std::vector<Finding> shown;
  for (const Finding& finding : findings) {
    if (!IsBuiltinRuleNote(finding)) shown.push_back(finding);
  }
  if (shown.empty()) return "";
  std::string text = FindingsToText(shown);
  const size_t hidden = findings.size() - shown.size();
  if (hidden > 0) {
    text.pop_back();  // the count line's newline
    text += fmt::format(" ({} note{} on unused rules of the built-in table left out; --verbose shows them)\n", hidden,
                        hidden == 1 ? "" : "s");
  }
  return text;
}

}  // namespace easyplan::api
