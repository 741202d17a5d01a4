// --mesh: axes left out are 1, an axis no one uses is a usage error with a did-you-mean, and a rule
// file's own axis may be sized (api/plan_inputs.h MeshFromOptions).
#include <gtest/gtest.h>

#include <fstream>

#include "api/plan_inputs.h"
#include "api/plan_pipeline.h"
#include "api/test_models.h"

namespace easyplan::api {
namespace {

TEST(MeshOptionsTest, AxesLeftOutOfTheMeshAreOne) {
  auto model = LoadExample("llama-3.1-8b");
  PlanOptions options;
  options.mesh.axes = "fsdp=8";
  auto inputs = PreparePlan(model, options);
  ASSERT_TRUE(inputs.ok()) << inputs.status().ToString();
  EXPECT_EQ(inputs->mesh.axis_names, (std::vector<std::string>{"dp", "fsdp", "ep", "tp", "sp"}));
  EXPECT_EQ(inputs->mesh.shape, (std::vector<int64_t>{1, 8, 1, 1, 1}));
  // Given in any order, the mesh keeps the config's axis order.
  options.mesh.axes = "tp=2,dp=2";
  inputs = PreparePlan(model, options);
  ASSERT_TRUE(inputs.ok()) << inputs.status().ToString();
  EXPECT_EQ(inputs->mesh.shape, (std::vector<int64_t>{2, 1, 1, 2, 1}));
}

TEST(MeshOptionsTest, AnAxisNothingUsesIsBadInputWithTheAxesAndADidYouMean) {
  auto model = LoadExample("llama-3.1-8b");
  PlanOptions options;
  for (const auto& [mesh, meant] : std::vector<std::pair<std::string, std::string>>{
           {"mp=2", "tp"}, {"fsdq=4", "fsdp"}, {"model=2", "tp"}, {"data=2,tp=2", "dp"}}) {
    options.mesh.axes = mesh;
    auto inputs = PreparePlan(model, options);
    ASSERT_FALSE(inputs.ok()) << mesh;
    EXPECT_EQ(inputs.status().kind(), ErrorKind::kBadInput);
    const std::string text = inputs.status().ToString();
    EXPECT_NE(text.find("did you mean '" + meant + "'"), std::string::npos) << text;
    EXPECT_NE(text.find("the mesh axes are dp, fsdp, ep, tp, sp"), std::string::npos) << text;
  }
}

TEST(MeshOptionsTest, ARuleFilesOwnAxisCanBeSized) {
  auto model = LoadExample("llama-3.1-8b");
  const std::string rules = ::testing::TempDir() + "/model_axis_rules.yaml";
  std::ofstream(rules) << "layout: easydel\nrules:\n  - {match: 'q_proj/kernel', spec: [null, model]}\n"
                          "  - {match: '.*', spec: Replicated}\n";
  PlanOptions options;
  options.rules = rules;
  options.mesh.axes = "model=4";
  auto inputs = PreparePlan(model, options);
  ASSERT_TRUE(inputs.ok()) << inputs.status().ToString();
  EXPECT_EQ(inputs->mesh.axis_names.back(), "model");
  EXPECT_EQ(inputs->mesh.NumDevices(), 4);
  auto plan = inputs->Build();
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(plan->HasErrors());
}

TEST(MeshOptionsTest, OneUnknownAxisFindingPerAxisListingTheRulesThatUseIt) {
  auto model = LoadExample("llama-3.1-8b");
  const std::string rules = ::testing::TempDir() + "/unsized_axis_rules.yaml";
  std::ofstream(rules) << "layout: easydel\nrules:\n  - {match: 'q_proj/kernel', spec: [null, model]}\n"
                          "  - {match: 'k_proj/kernel', spec: [null, model]}\n  - {match: '.*', spec: Replicated}\n";
  PlanOptions options;
  options.rules = rules;
  options.mesh.axes = "tp=2";
  auto plan = PlanModel(model, options);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  int unknown = 0;
  for (const planner::Finding& f : plan->plan.findings) {
    if (f.code != planner::FindingCode::kUnknownAxis) continue;
    ++unknown;
    EXPECT_EQ(f.count, 64);  // q_proj and k_proj of 32 layers
    ASSERT_EQ(f.notes.size(), 1u);
    EXPECT_NE(f.notes[0].find("rule 1"), std::string::npos) << f.notes[0];
  }
  EXPECT_EQ(unknown, 1);
}

}  // namespace
}  // namespace easyplan::api
