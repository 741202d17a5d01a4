#include "api/findings_json.h"

#include <gtest/gtest.h>

namespace easyplan::api {
namespace {

planner::Finding FindingOf(planner::FindingCode code, Severity severity, const std::string& message) {
  planner::Finding finding{code};
  finding.severity = severity;
  finding.message = message;
  return finding;
}

TEST(FindingsJsonTest, NoFindingsCloseTheDocumentWithAnEmptyList) {
  EXPECT_EQ(ClosingFindingsJson({}), "  \"findings\": []\n}\n");
  EXPECT_EQ(FindingsToJsonText({}, "  \"ok\": true,\n"), "{\n  \"ok\": true,\n  \"findings\": []\n}\n");
}

TEST(FindingsJsonTest, EachFindingStandsOnALineOfItsOwn) {
  const std::vector<planner::Finding> findings = {
      FindingOf(planner::FindingCode::kUnmatchedTensor, Severity::kError, "a"),
      FindingOf(planner::FindingCode::kDeadRule, Severity::kWarning, "b")};
  EXPECT_EQ(ClosingFindingsJson(findings),
            "  \"findings\": [\n    " + FindingJson(findings[0]) + ",\n    " + FindingJson(findings[1]) + "\n  ]\n}\n");
  EXPECT_EQ(FindingJson(findings[1]), R"({"code": "dead-rule", "severity": "warning", "message": "b"})");
}

TEST(FindingsJsonTest, CountSeveritiesCountsErrorsAndWarningsButNotNotes) {
  const SeverityCounts counts = CountSeverities({
      FindingOf(planner::FindingCode::kUnmatchedTensor, Severity::kError, "a"),
      FindingOf(planner::FindingCode::kDeadRule, Severity::kWarning, "b"),
      FindingOf(planner::FindingCode::kShadowedRule, Severity::kWarning, "c"),
      FindingOf(planner::FindingCode::kUnevenChunked, Severity::kNote, "d"),
  });
  EXPECT_EQ(counts.errors, 1);
  EXPECT_EQ(counts.warnings, 2);
}

}  // namespace
}  // namespace easyplan::api
