// A built-in table's generic rules that match nothing (biases, score) are notes; the same rules in the
// user's own rule file are warnings (issue 20: Mixtral's plans printed five dead-rule warnings).
#include <gtest/gtest.h>

#include "api/plan_pipeline.h"
#include "api/test_models.h"

namespace easyplan::api {
namespace {

Severity DeadRuleSeverity(const planner::Plan& plan, int* count) {
  Severity severity = Severity::kError;
  *count = 0;
  for (const planner::Finding& f : plan.findings) {
    if (f.code != planner::FindingCode::kDeadRule) continue;
    ++*count;
    severity = f.severity;
  }
  return severity;
}

TEST(BuiltinRuleFindingsTest, DeadRulesOfABuiltinTableAreNotesAndOfTheUsersFileWarnings) {
  ConfigOptions tables;
  tables.easydel_version = "c14e25c9";  // the version with per-family tables (090a03b2 generates its rules)
  auto model = LoadExample("mixtral-8x7b", tables);
  PlanOptions options;
  options.mesh.axes = "fsdp=8";
  auto builtin = PlanModel(model, options);
  ASSERT_TRUE(builtin.ok()) << builtin.status().ToString();
  int count = 0;
  EXPECT_EQ(DeadRuleSeverity(builtin->plan, &count), Severity::kNote);
  EXPECT_EQ(count, 5);
  options.rules = testing::SourceDir() + "/rules/mixtral.yaml";  // the same table, as the user's file
  auto own = PlanModel(model, options);
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_EQ(DeadRuleSeverity(own->plan, &count), Severity::kWarning);
  EXPECT_EQ(count, 5);
}

}  // namespace
}  // namespace easyplan::api
