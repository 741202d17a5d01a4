#include "planner/plan.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "planner/logical_check.h"
#include "planner/plan_test_util.h"
#include "rules/rule_library.h"
#include "tests/test_util.h"

namespace easyplan::planner {
namespace {

using plan_testing::MakeMesh;

using plan_testing::ExpectSamePlan;

// A config holding EasyDeL's default partition_axis and a few counts, as `resolve` would give it.
Json MoeTestConfig() {
  Json config = Json::parse(R"({
    "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 1000, "num_local_experts": 4,
    "use_expert_tensor_mode": false, "fsdp_is_ep_bound": true, "sp_is_ep_bound": true
  })");
  config["partition_axis"] = testing::DefaultPartitionAxis();
  return config;
}

class PlanTest : public ::testing::Test {
 protected:
  PlanTest() : library_(schemas::DataSource::Embedded()), config_(MoeTestConfig()) {}

  // A tree of `layers` repeated layers and the rules for it (below ReplayingRepeatedLayers...).
  const rules::RuleSet& LayeredRules();
  static ParamTree LayeredTree(int layers);

  const rules::RuleSet& Rules(const std::string& yaml) {
    auto presets = library_.GetPresets();
    EXPECT_TRUE(presets.ok());
    auto set = rules::ParseRuleSet(yaml, "test_rules.yaml", **presets);
    EXPECT_TRUE(set.ok()) << set.status().ToString();
    rule_sets_.push_back(std::make_unique<rules::RuleSet>(std::move(*set)));
    return *rule_sets_.back();
  }

  StatusOr<Plan> Build(const ParamTree& tree, const rules::RuleSet& rules, Mesh mesh,
                       UnevenMode uneven = UnevenMode::kReplicate, std::vector<LayoutLink> links = {},
                       bool replay_outcomes = true, bool keep_params = true) {
    PlanRequest request;
    request.tree = &tree;
    request.rules = &rules;
    request.presets = *library_.GetPresets();
    request.logical_dims = *library_.GetLogicalDims();
    request.config = &config_;
    request.mesh = std::move(mesh);
    request.uneven = uneven;
    request.links = std::move(links);
    request.replay_outcomes = replay_outcomes;
    request.keep_params = keep_params;
    return BuildPlan(request);
  }

  static const Finding* FindCode(const Plan& plan, FindingCode code) {
    for (const Finding& finding : plan.findings) {
      if (finding.code == code) return &finding;
    }
    return nullptr;
  }

  rules::RuleLibrary library_;
  Json config_;
  std::vector<std::unique_ptr<rules::RuleSet>> rule_sets_;
};

ParamTree Tree(std::vector<TensorEntry> tensors) {
  ParamTree tree;
  tree.layout = Layout::kEasyDel;
  tree.tensors = std::move(tensors);
  return tree;
}

TEST_F(PlanTest, FirstMatchingRuleWinsAndPresetsResolveThroughPartitionAxis) {
  const auto& rules = Rules(
      "rules:\n"
      "  - {match: 'q_proj/kernel', spec: ColumnWise}\n"
      "  - {match: 'proj/kernel', spec: RowWise}\n"
      "  - {match: '.*', spec: Replicated}\n");
  ParamTree tree = Tree(
      {{"a/q_proj/kernel", Shape{64, 128}, DType::kBFloat16}, {"a/o_proj/kernel", Shape{128, 64}, DType::kBFloat16}});
  auto plan = Build(tree, rules, MakeMesh({"dp", "fsdp", "tp", "sp"}, {1, 4, 2, 1}));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->params[0].rule, 0);
  EXPECT_EQ(plan->params[0].effective.ToString(), "P(('fsdp', 'sp'), 'tp')");
  EXPECT_EQ(plan->params[1].rule, 1);
  EXPECT_EQ(plan->params[1].effective.ToString(), "P('tp', ('fsdp', 'sp'))");
  // 64x128 bf16 over 8 devices = 2 KiB each; plus 128x64 bf16 likewise.
  ASSERT_EQ(plan->device_bytes.size(), 8u);
  for (int64_t bytes : plan->device_bytes) EXPECT_EQ(bytes, 2 * 64 * 128 * 2 / 8);
}

TEST_F(PlanTest, ScalarsGetEmptySpecWithoutARuleAndUnmatchedTensorsAreErrors) {
  const auto& rules = Rules("rules:\n  - {match: 'kernel', spec: [fsdp]}\n");
  ParamTree tree = Tree({{"step", Shape{}, DType::kInt32}, {"a/bias", Shape{16}, DType::kFloat32}});
  auto plan = Build(tree, rules, MakeMesh({"fsdp"}, {4}));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->params[0].origin, SpecOrigin::kScalar);
  EXPECT_EQ(plan->params[0].effective.ToString(), "P()");
  EXPECT_EQ(plan->params[1].origin, SpecOrigin::kUnmatched);
  const Finding* unmatched = FindCode(*plan, FindingCode::kUnmatchedTensor);
  ASSERT_NE(unmatched, nullptr);
  EXPECT_EQ(unmatched->message, "Partition rule not found for param: a/bias");
  EXPECT_TRUE(plan->HasErrors());
}

TEST_F(PlanTest, GroupsShareOneLayoutAndTotalsDoNotScaleWithTensorsTimesDevices) {
  const auto& rules = Rules("rules:\n  - {match: '.*', spec: [fsdp, tp]}\n");
  std::vector<TensorEntry> tensors;
  for (int i = 0; i < 100; ++i) tensors.push_back({"layer/" + std::to_string(i), Shape{64, 64}, DType::kFloat32});
  ParamTree tree = Tree(std::move(tensors));
  auto plan = Build(tree, rules, MakeMesh({"fsdp", "tp"}, {4, 4}));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->groups.size(), 1u);
  EXPECT_EQ(plan->groups[0].tensors, 100);
  for (int64_t bytes : plan->device_bytes) EXPECT_EQ(bytes, 100 * 64 * 64 * 4 / 16);
}

TEST_F(PlanTest, UnevenModesReplicateErrorOrChunk) {
  const auto& rules = Rules("rules:\n  - {match: '.*', spec: [fsdp]}\n");
  ParamTree tree = Tree({{"x", Shape{10}, DType::kFloat32}});
  const Mesh mesh = MakeMesh({"fsdp"}, {4});
  auto replicate = Build(tree, rules, mesh, UnevenMode::kReplicate);
  ASSERT_TRUE(replicate.ok());
  EXPECT_EQ(replicate->params[0].effective.ToString(), "P()");
  EXPECT_NE(FindCode(*replicate, FindingCode::kUnevenReplaced), nullptr);
  EXPECT_EQ(replicate->device_bytes, (std::vector<int64_t>{40, 40, 40, 40}));

  auto error = Build(tree, rules, mesh, UnevenMode::kError);
  ASSERT_TRUE(error.ok());
  const Finding* indivisible = FindCode(*error, FindingCode::kIndivisible);
  ASSERT_NE(indivisible, nullptr);
  EXPECT_NE(indivisible->message.find("implies that array axis 0 is partitioned 4 times"), std::string::npos);

  // torch.chunk of 10 rows over 4: 3, 3, 3, 1.
  auto chunk = Build(tree, rules, mesh, UnevenMode::kChunk);
  ASSERT_TRUE(chunk.ok());
  EXPECT_EQ(chunk->device_bytes, (std::vector<int64_t>{12, 12, 12, 4}));
}

TEST_F(PlanTest, TruncationUnknownAndDuplicateAxesAreFindingsAtTheRuleLine) {
  const auto& rules = Rules(
      "rules:\n"
      "  - {match: 'norm', spec: [fsdp, tp]}\n"
      "  - {match: 'emb', spec: [model, null]}\n"
      "  - {match: 'dup', spec: [fsdp, fsdp]}\n");
  ParamTree tree = Tree({{"norm", Shape{8}, DType::kFloat32},
                         {"emb", Shape{8, 8}, DType::kFloat32},
                         {"dup", Shape{8, 8}, DType::kFloat32}});
  auto plan = Build(tree, rules, MakeMesh({"fsdp", "tp"}, {2, 2}));
  ASSERT_TRUE(plan.ok());
  const Finding* truncated = FindCode(*plan, FindingCode::kTruncatedSpec);
  ASSERT_NE(truncated, nullptr);
  EXPECT_EQ(truncated->loc.line, 2);
  const Finding* unknown = FindCode(*plan, FindingCode::kUnknownAxis);
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(unknown->loc.line, 3);
  EXPECT_NE(unknown->message.find("Resource axis: model"), std::string::npos);
  const Finding* duplicate = FindCode(*plan, FindingCode::kDuplicateAxis);
  ASSERT_NE(duplicate, nullptr);
  EXPECT_EQ(duplicate->loc.line, 4);
}

TEST_F(PlanTest, DeadAndShadowedRulesAreWarningsButAFinalCatchAllIsNot) {
  const auto& rules = Rules(
      "rules:\n"
      "  - {match: 'kernel', spec: [fsdp]}\n"
      "  - {match: 'q_proj/kernel', spec: [tp]}\n"
      "  - {match: 'never', spec: [tp]}\n"
      "  - {match: '.*', spec: Replicated}\n");
  ParamTree tree = Tree({{"q_proj/kernel", Shape{8, 8}, DType::kFloat32}});
  auto plan = Build(tree, rules, MakeMesh({"fsdp", "tp"}, {2, 2}));
  ASSERT_TRUE(plan.ok());
  const Finding* shadowed = FindCode(*plan, FindingCode::kShadowedRule);
  ASSERT_NE(shadowed, nullptr);
  EXPECT_EQ(shadowed->rule, 1);
  const Finding* dead = FindCode(*plan, FindingCode::kDeadRule);
  ASSERT_NE(dead, nullptr);
  EXPECT_EQ(dead->rule, 2);
  for (const Finding& finding : plan->findings) EXPECT_NE(finding.rule, 3) << finding.message;
}

TEST_F(PlanTest, CountsOfHeadsMustDivideTheirAxesEvenWhenTheDimDoes) {
  // 2 kv heads x head_dim 16 = 32 columns split evenly over tp=4, but 2 heads cannot be.
  const auto& rules = Rules("rules:\n  - {match: 'self_attn/(k_proj|v_proj)/kernel', spec: [null, tp]}\n");
  ParamTree tree = Tree({{"model/layers/0/self_attn/k_proj/kernel", Shape{64, 32}, DType::kFloat32}});
  auto plan = Build(tree, rules, MakeMesh({"tp"}, {4}));
  ASSERT_TRUE(plan.ok());
  const Finding* logical = FindCode(*plan, FindingCode::kLogicalIndivisible);
  ASSERT_NE(logical, nullptr);
  EXPECT_NE(logical->message.find("holds 2 kv heads (num_key_value_heads), which tp=4 does not divide"),
            std::string::npos)
      << logical->message;
  ASSERT_EQ(logical->notes.size(), 1u);
  EXPECT_EQ(logical->notes[0], "valid sizes for 'tp' here: 1, 2");
}

TEST_F(PlanTest, PerExpertTensorsLiveOnlyOnTheirExpertBlock) {
  // An HF expert tensor [out=8, in=4] linked to the stacked EasyDeL kernel [E=4, in=4, out=8] whose
  // spec puts ep on the expert dim: expert 3 lives on the ep=1 half of the mesh.
  const auto& rules = Rules("rules:\n  - {match: 'experts/w1/kernel', spec: [ep, null, tp]}\n");
  ParamTree tree;
  tree.layout = Layout::kHf;
  tree.tensors = {{"m.experts.3.w1.weight", Shape{8, 4}, DType::kFloat32}};
  LayoutLink link;
  link.rule_name = "m/experts/w1/kernel";
  link.rule_shape = Shape{4, 4, 8};
  link.dim_of = {2, 1};
  link.expert_dim = 0;
  link.expert = 3;
  auto plan = Build(tree, rules, MakeMesh({"ep", "tp"}, {2, 2}), UnevenMode::kReplicate, {link});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->params[0].effective.ToString(), "P('tp', None)");
  // Devices 0, 1 have ep=0 (experts 0-1); devices 2, 3 have ep=1 (experts 2-3): 4x4 floats each.
  EXPECT_EQ(plan->device_bytes, (std::vector<int64_t>{0, 0, 64, 64}));
  EXPECT_EQ(plan->groups[0].Replicas(), 1);
}

// Layers that repeat every kind of outcome: a plain match, a truncated spec, an uneven dim, a head
// count tp does not divide, an unmatched tensor, a scalar, and large replicated tensors with and
// without a rule (the latter keyed by each tensor's own name, so never replayed).
const rules::RuleSet& PlanTest::LayeredRules() {
  return Rules(
      "rules:\n"
      "  - {match: 'self_attn/(k_proj|v_proj)/kernel', spec: [null, tp]}\n"
      "  - {match: 'mlp/up/kernel', spec: [fsdp, tp, tp]}\n"
      "  - {match: 'mlp/odd/kernel', spec: [fsdp]}\n"
      "  - {match: 'norm/scale', spec: [null]}\n"
      "  - {match: 'big/kernel', spec: [null, null]}\n");
}

ParamTree PlanTest::LayeredTree(int layers) {
  std::vector<TensorEntry> tensors;
  for (int layer = 0; layer < layers; ++layer) {
    const std::string prefix = "model/layers/" + std::to_string(layer) + "/";
    tensors.push_back({prefix + "self_attn/k_proj/kernel", Shape{64, 32}, DType::kBFloat16});
    tensors.push_back({prefix + "mlp/up/kernel", Shape{64, 128}, DType::kFloat32});
    tensors.push_back({prefix + "mlp/odd/kernel", Shape{10, 8}, DType::kFloat32});
    tensors.push_back({prefix + "norm/scale", Shape{64}, layer % 2 ? DType::kFloat32 : DType::kBFloat16});
    tensors.push_back({prefix + "norm/bias", Shape{64}, DType::kFloat32});
    tensors.push_back({prefix + "step", Shape{}, DType::kInt32});
    tensors.push_back({prefix + "big/kernel", Shape{4096, 4096}, DType::kFloat32});
    tensors.push_back({prefix + "stray/kernel", Shape{4096, 4096}, DType::kFloat32});
  }
  return Tree(std::move(tensors));
}

TEST_F(PlanTest, ReplayingRepeatedLayersGivesTheSamePlanAsPlanningEveryTensor) {
  const auto& rules = LayeredRules();
  ParamTree tree = LayeredTree(12);
  const Mesh mesh = MakeMesh({"fsdp", "tp"}, {4, 4});
  for (UnevenMode uneven : {UnevenMode::kReplicate, UnevenMode::kError, UnevenMode::kChunk}) {
    SCOPED_TRACE(static_cast<int>(uneven));
    auto replayed = Build(tree, rules, mesh, uneven);
    auto planned = Build(tree, rules, mesh, uneven, {}, /*replay_outcomes=*/false);
    ASSERT_TRUE(replayed.ok()) << replayed.status().ToString();
    ASSERT_TRUE(planned.ok()) << planned.status().ToString();
    ExpectSamePlan(*replayed, *planned);
  }
  // The unmatched large tensors (no rule) are one finding each; the matched ones aggregate.
  auto plan = Build(tree, rules, mesh);
  ASSERT_TRUE(plan.ok());
  int64_t unmatched_large = 0;
  for (const Finding& finding : plan->findings) {
    if (finding.code == FindingCode::kLargeReplicated && finding.rule < 0) ++unmatched_large;
    if (finding.code == FindingCode::kLargeReplicated && finding.rule == 4) {
      EXPECT_EQ(finding.count, 12);
    }
    if (finding.code == FindingCode::kUnmatchedTensor) {
      EXPECT_EQ(finding.count, 24);
    }
  }
  EXPECT_EQ(unmatched_large, 12);
}

TEST_F(PlanTest, APlanWithoutItsEntriesHasTheSameTotalsGroupsAndFindings) {
  const auto& rules = LayeredRules();
  ParamTree tree = LayeredTree(6);
  const Mesh mesh = MakeMesh({"fsdp", "tp"}, {4, 4});
  for (UnevenMode uneven : {UnevenMode::kReplicate, UnevenMode::kError, UnevenMode::kChunk}) {
    SCOPED_TRACE(static_cast<int>(uneven));
    for (bool replay : {true, false}) {
      auto full = Build(tree, rules, mesh, uneven, {}, replay);
      auto lean = Build(tree, rules, mesh, uneven, {}, replay, /*keep_params=*/false);
      ASSERT_TRUE(full.ok() && lean.ok());
      EXPECT_EQ(full->params.size(), tree.tensors.size());
      EXPECT_TRUE(lean->params.empty());
      full->params.clear();
      ExpectSamePlan(*lean, *full);
    }
  }
}

TEST_F(PlanTest, ReplayingPerExpertTensorsKeepsEachExpertOnItsOwnDevices) {
  const auto& rules = Rules("rules:\n  - {match: 'experts/w1/kernel', spec: [ep, null, tp]}\n");
  ParamTree tree;
  tree.layout = Layout::kHf;
  std::vector<LayoutLink> links;
  for (int layer = 0; layer < 3; ++layer) {
    for (int expert = 0; expert < 4; ++expert) {
      tree.tensors.push_back({"m.layers." + std::to_string(layer) + ".experts." + std::to_string(expert) + ".w1.weight",
                              Shape{8, 4}, DType::kFloat32});
      LayoutLink link;
      link.rule_name = "m/layers/" + std::to_string(layer) + "/experts/w1/kernel";
      link.rule_shape = Shape{4, 4, 8};
      link.dim_of = {2, 1};
      link.expert_dim = 0;
      link.expert = expert;
      links.push_back(std::move(link));
    }
  }
  const Mesh mesh = MakeMesh({"ep", "tp"}, {2, 2});
  auto replayed = Build(tree, rules, mesh, UnevenMode::kReplicate, links);
  auto planned = Build(tree, rules, mesh, UnevenMode::kReplicate, links, /*replay_outcomes=*/false);
  ASSERT_TRUE(replayed.ok()) << replayed.status().ToString();
  ASSERT_TRUE(planned.ok()) << planned.status().ToString();
  ExpectSamePlan(*replayed, *planned);
  // Each device holds 2 experts x 3 layers of 4x4 floats.
  EXPECT_EQ(replayed->device_bytes, (std::vector<int64_t>{6 * 64, 6 * 64, 6 * 64, 6 * 64}));
}

TEST_F(PlanTest, RulesThatTellLayerNumbersApartAreMatchedPerTensor) {
  // 'layers/1/' is not number-blind: layer 1 and layer 10 must not share a result.
  const auto& rules = Rules(
      "rules:\n"
      "  - {match: 'layers/1/', spec: [tp]}\n"
      "  - {match: '.*', spec: [null]}\n");
  ParamTree tree = Tree({{"model/layers/1/w", Shape{8}, DType::kFloat32},
                         {"model/layers/2/w", Shape{8}, DType::kFloat32},
                         {"model/layers/10/w", Shape{8}, DType::kFloat32}});
  auto plan = Build(tree, rules, MakeMesh({"tp"}, {4}));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->params[0].rule, 0);
  EXPECT_EQ(plan->params[1].rule, 1);
  EXPECT_EQ(plan->params[2].rule, 1);
}

TEST(DivisorsTest, ListsEveryDivisorInOrder) {
  EXPECT_EQ(Divisors(12), (std::vector<int64_t>{1, 2, 3, 4, 6, 12}));
  EXPECT_EQ(Divisors(1), (std::vector<int64_t>{1}));
  EXPECT_EQ(Divisors(49), (std::vector<int64_t>{1, 7, 49}));
}

TEST(DivisorsTest, ShortListsAreShownWhole) {
  EXPECT_EQ(NearestDivisorsText(32, 3), "1, 2, 4, 8, 16, 32");
  EXPECT_EQ(NearestDivisorsText(7, 2), "1, 7");
}

// Qwen's vocabulary of 151,936 has 16 divisors: the note keeps the three on each side of the asked size.
TEST(DivisorsTest, LongListsKeepTheNearestOnEachSide) {
  EXPECT_EQ(NearestDivisorsText(151936, 3), "1, 2, 4, 8, 16, ... (16 sizes divide 151936)");
  EXPECT_EQ(NearestDivisorsText(151936, 1000), "..., 32, 64, 128, 1187, 2374, 4748, ... (16 sizes divide 151936)");
  EXPECT_EQ(NearestDivisorsText(151936, 1000000), "..., 37984, 75968, 151936 (16 sizes divide 151936)");
}

}  // namespace
}  // namespace easyplan::planner
