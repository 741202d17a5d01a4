// The activation plan's own steps as unit tests: the residual-stream and loss constraints
// (easydel/infra/loss_utils.py) per mode, and the findings a plan's shapes give.
#include "planner/activations.h"

#include <gtest/gtest.h>

#include "planner/activations_test_util.h"

namespace easyplan::planner {
namespace {

using activations_testing::ActivationsTest;
using activations_testing::B;
using activations_testing::DP;
using activations_testing::kC1;
using activations_testing::N;
using activations_testing::SP;
using activations_testing::TP;
using plan_testing::FiveAxisMesh;
using plan_testing::P;

// ---- Residual stream and logits (easydel/infra/loss_utils.py ForCausalLMLoss) -------------------------

TEST_F(ActivationsTest, Section3PresetsRawDefaultAndC1Decode) {
  const Json defaults = Config();
  const Json c1 = Config(kC1);
  const auto raw = [&](const std::string& name, const Json& config, Mode mode) {
    return Resolve(table_.FindResidual(name)->axes, config, mode);
  };
  for (Mode mode : {Mode::kTrain, Mode::kDecode}) {
    EXPECT_EQ(raw("hidden_state", defaults, mode), P({B, SP, TP}));
    EXPECT_EQ(raw("attn_q", defaults, mode), P({B, SP, TP, N}));
    EXPECT_EQ(raw("attn_kv", defaults, mode), P({B, SP, TP, N}));
  }
  EXPECT_EQ(raw("hidden_state", c1, Mode::kDecode), P({DP, SP, TP}));
  EXPECT_EQ(raw("attn_q", c1, Mode::kDecode), P({DP, SP, TP, N}));
  EXPECT_EQ(raw("attn_kv", c1, Mode::kDecode), P({DP, SP, TP, N}));
  EXPECT_EQ(raw("hidden_state", c1, Mode::kTrain), P({B, SP, TP}));
}

TEST_F(ActivationsTest, Section3CorrectedExamples) {
  const Mesh mesh = FiveAxisMesh(2, 2, 1, 2, 2);
  const Json defaults = Config();
  EXPECT_EQ(Residual("hidden_state", defaults, Shape{8, 1, 4096}, mesh), P({B, N, TP}));
  EXPECT_EQ(Residual("hidden_state", Config(kC1), Shape{8, 1, 4096}, mesh), P({DP, N, TP}));
  EXPECT_EQ(Residual("hidden_state", defaults, Shape{1, 1, 4096}, mesh), P({N, N, TP}));
  EXPECT_EQ(Residual("hidden_state", defaults, Shape{6, 2048, 4100}, mesh), P({N, SP, TP}));
  EXPECT_EQ(Residual("hidden_state", defaults, Shape{8, 1, 4096}, FiveAxisMesh(1, 8, 1, 1, 1)), P({B, SP, TP}));
}

TEST_F(ActivationsTest, Section3LossConstrainsLogitsInTrainOnly) {
  const Mesh mesh = FiveAxisMesh(1, 4, 1, 2, 1);
  auto train = Build(Config(), mesh, Mode::kTrain, std::nullopt, std::nullopt);
  ASSERT_TRUE(train.ok()) << train.status().ToString();
  EXPECT_EQ(train->logits, P({B, SP, TP}));
  EXPECT_EQ(train->labels, P({B, SP}));
  for (Mode mode : {Mode::kPrefill, Mode::kDecode, Mode::kInsert}) {
    auto plan = Build(Config(), mesh, mode, std::nullopt, std::nullopt);
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->logits, std::nullopt);
  }
  // The loss uses hidden_state_axis for the vocabulary, with no decode variant.
  EXPECT_EQ(Build(Config(kC1), mesh, Mode::kTrain, std::nullopt, std::nullopt)->logits, P({B, SP, TP}));
  const Json hidden_dp = Config({"partition_axis.hidden_state_axis=dp", "partition_axis.vocab_axis=ep"});
  EXPECT_EQ(Build(hidden_dp, mesh, Mode::kTrain, std::nullopt, std::nullopt)->logits, P({B, SP, DP}));
  // Vocab 32000 keeps tp; 32001 drops it.
  const ActivationTable::ResidualEntry* logits = table_.FindResidual("logits");
  EXPECT_EQ(
      CorrectSpec(Shape{8, 2048, 32000}, Resolve(logits->axes, Config(), Mode::kTrain), mesh, UnevenMode::kReplicate)
          .spec,
      P({B, SP, TP}));
  EXPECT_EQ(
      CorrectSpec(Shape{8, 2048, 32001}, Resolve(logits->axes, Config(), Mode::kTrain), mesh, UnevenMode::kReplicate)
          .spec,
      P({B, SP, N}));
}

TEST_F(ActivationsTest, HiddenStateOfAModeFollowsTheQueryLength) {
  const Json c1 = Config(kC1);
  const Mesh mesh = FiveAxisMesh(2, 2, 1, 2, 2);
  auto spec_of = [](const ActivationPlan& plan, const std::string& name) {
    for (const auto& [entry, spec] : plan.residual) {
      if (entry == name) return spec;
    }
    return PartitionSpec();
  };
  EXPECT_EQ(spec_of(*Build(c1, mesh, Mode::kDecode, std::nullopt, std::nullopt), "hidden_state"), P({DP, SP, TP}));
  EXPECT_EQ(spec_of(*Build(c1, mesh, Mode::kInsert, std::nullopt, std::nullopt), "hidden_state"),
            P({B, SP, TP}));  // the presets' own integer mode: T > 1 is train
  EXPECT_EQ(spec_of(*Build(c1, mesh, Mode::kTrain, 8, 1), "hidden_state"), P({DP, SP, TP}));
}

// ---- findings from shapes -----------------------------------------------------------------------------

TEST_F(ActivationsTest, DecodeFindingsForBatchOneAndSequenceParallelism) {
  // batch 1 over fsdp=8; decode with sp=2; 8 kv heads over tp=16.
  auto batch = Build(Config(), FiveAxisMesh(1, 8, 1, 1, 1), Mode::kDecode, 1, 2048);
  ASSERT_TRUE(batch.ok());
  ASSERT_FALSE(batch->findings.empty());
  EXPECT_EQ(batch->findings.front().code, FindingCode::kUnevenReplaced);
  EXPECT_EQ(batch->findings.front().message,
            "decode attention.query3d [1, 32, 128]: dim 0 (1) is not divisible by fsdp=8 x dp=1 = 8, so eformer's "
            "correction leaves it unsharded");
  EXPECT_EQ(batch->findings.front().notes,
            (std::vector<std::string>{"dim 0 shards over fsdp x dp when it is a multiple of 8"}));

  auto sp = Build(Config(), FiveAxisMesh(1, 1, 1, 1, 2), Mode::kDecode, 4, 2048);
  ASSERT_TRUE(sp.ok());
  bool query_seq = false;
  for (const Finding& finding : sp->findings) {
    query_seq = query_seq || finding.message.starts_with(
                                 "decode attention.query [4, 1, 32, 128]: dim 1 (1) is not "
                                 "divisible by sp=2");
  }
  EXPECT_TRUE(query_seq);

  auto heads = Build(Config(), FiveAxisMesh(1, 1, 1, 16, 1), Mode::kTrain, 16, 128);
  ASSERT_TRUE(heads.ok());
  bool kv_heads = false;
  for (const Finding& finding : heads->findings) {
    kv_heads = kv_heads || finding.message.starts_with("train attention.key [16, 128, 8, 128]: dim 2 (8)");
  }
  EXPECT_TRUE(kv_heads);
}

TEST_F(ActivationsTest, AnAxisTheMeshLacksIsAnError) {
  Mesh mesh;
  mesh.axis_names = {"fsdp", "tp"};
  mesh.shape = {2, 2};
  auto plan = Build(Config(kC1), mesh, Mode::kDecode, 4, 64);
  ASSERT_TRUE(plan.ok());
  ASSERT_FALSE(plan->findings.empty());
  EXPECT_EQ(plan->findings.front().code, FindingCode::kUnknownAxis);
  EXPECT_EQ(plan->findings.front().severity, Severity::kError);
}

}  // namespace
}  // namespace easyplan::planner
