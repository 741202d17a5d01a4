#include "api/findings_ci.h"

#include <fmt/format.h>

#include <iterator>
#include <map>

#include "api/findings_text.h"

namespace easyplan::api {
namespace {

using planner::Finding;
using planner::FindingCode;

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

}  // namespace easyplan::api
