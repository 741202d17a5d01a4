// A step's sequence against the model's context (api/context_length.h, issue 44): the family files say
// which key bounds it and whether positions are learned; every command that takes --seq checks it.
#include "api/context_length.h"

#include <gtest/gtest.h>

#include "api/cost.h"
#include "api/test_models.h"
#include "schemas/model_dims.h"

namespace easyplan::api {
namespace {

schemas::ModelDims DimsOf(const std::string& example) {
  std::shared_ptr<const Model> model = LoadExample(example);
  if (!model) return {};
  StatusOr<schemas::ModelDims> dims = schemas::ModelDimsOf(model->resolved());
  EXPECT_TRUE(dims.ok()) << dims.status().ToString();
  return dims.ok() ? *dims : schemas::ModelDims();
}

TEST(ContextLengthTest, TheFamilyFilesNameTheKeyAndHowPositionsAreEncoded) {
  const schemas::ModelDims gpt2 = DimsOf("gpt2");
  EXPECT_EQ(gpt2.context_key, "n_positions");
  EXPECT_EQ(gpt2.context_limit, 1024);
  EXPECT_TRUE(gpt2.learned_positions);
  const schemas::ModelDims llama = DimsOf("llama-3.1-8b");
  EXPECT_EQ(llama.context_key, "max_position_embeddings");
  EXPECT_EQ(llama.context_limit, 131072);
  EXPECT_FALSE(llama.learned_positions);
  // A multimodal config's bound is its text model's (gemma3 -> text_config).
  const schemas::ModelDims gemma3 = DimsOf("gemma-3-4b");
  EXPECT_EQ(gemma3.context_key, "max_position_embeddings");
  EXPECT_GT(gemma3.context_limit, 0);
}

TEST(ContextLengthTest, PastALearnedTableIsBadInputNamingTheKey) {
  const schemas::ModelDims gpt2 = DimsOf("gpt2");
  EXPECT_FALSE(*ContextLengthFinding(gpt2, 1024, "--seq"));  // the last row exists
  StatusOr<std::optional<planner::Finding>> past = ContextLengthFinding(gpt2, 1025, "--seq");
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.status().kind(), ErrorKind::kBadInput);
  EXPECT_NE(past.status().ToString().find("--seq 1025 is past the model's n_positions (1024)"), std::string::npos)
      << past.status().ToString();
}

TEST(ContextLengthTest, PastARotaryBoundIsAnErrorFindingNamingTheKey) {
  const schemas::ModelDims llama = DimsOf("llama-3.1-8b");
  EXPECT_FALSE(*ContextLengthFinding(llama, 131072, "--seq"));
  StatusOr<std::optional<planner::Finding>> past = ContextLengthFinding(llama, 400000, "--max-length");
  ASSERT_TRUE(past.ok()) << past.status().ToString();
  ASSERT_TRUE(*past);
  EXPECT_EQ((*past)->code, planner::FindingCode::kContextLength);
  EXPECT_EQ((*past)->severity, Severity::kError);
  EXPECT_NE((*past)->message.find("--max-length 400000 is past the model's max_position_embeddings (131072)"),
            std::string::npos)
      << (*past)->message;
}

// issue 44: `cost` of a llama decode with --seq 400000 exited 0 without a word.
TEST(ContextLengthTest, CostOfADecodePastTheContextCarriesTheFinding) {
  std::shared_ptr<const Model> model = LoadExample("llama-3.1-8b");
  ASSERT_TRUE(model);
  CostOptions options;
  options.plan.mesh.axes = "tp=8";
  options.memory.mode = "decode";
  options.memory.batch = 1;
  options.memory.seq = 400000;
  options.memory.hardware = "h100-sxm";
  StatusOr<CostResult> cost = Cost(model, options);
  ASSERT_TRUE(cost.ok()) << cost.status().ToString();
  EXPECT_TRUE(cost->plan.HasErrors());
  ASSERT_FALSE(cost->plan.findings.empty());
  EXPECT_EQ(cost->plan.findings.front().code, planner::FindingCode::kContextLength);
  EXPECT_TRUE(cost->estimate.has_value());  // the figures still come, beside the finding
}

}  // namespace
}  // namespace easyplan::api
