// Presets and tokens (eformer/common_types.py, eformer/escale/partition/manager.py, EasyDeL's MoE specs),
// rule-file parsing and first-match semantics (eformer's match_partition_rules, re.search).
#include <gtest/gtest.h>

#include "rules/matcher.h"
#include "rules/rule_library.h"
#include "tests/test_util.h"

namespace easyplan::rules {
namespace {

Json DefaultConfig() {
  Json config = Json::object();
  config["partition_axis"] = testing::DefaultPartitionAxis();
  config["use_expert_tensor_mode"] = false;
  config["fsdp_is_ep_bound"] = true;
  config["sp_is_ep_bound"] = true;
  return config;
}

class PresetsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto presets = library_.GetPresets();
    ASSERT_TRUE(presets.ok()) << presets.status().ToString();
    presets_ = *presets;
  }
  std::string Resolve(const std::string& preset, const Json& config, Mode mode = Mode::kTrain) {
    SpecSource spec;
    spec.preset = preset;
    spec.text = preset;
    auto resolved = presets_->Resolve(spec, config, mode);
    return resolved.ok() ? resolved->ToString() : "error: " + resolved.status().diag().message;
  }
  std::string ResolveList(std::vector<std::optional<std::vector<std::string>>> dims, const Json& config,
                          Mode mode = Mode::kTrain) {
    SpecSource spec;
    spec.dims = std::move(dims);
    spec.text = "list";
    auto resolved = presets_->Resolve(spec, config, mode);
    return resolved.ok() ? resolved->ToString() : "error: " + resolved.status().diag().message;
  }

  RuleLibrary library_{schemas::DataSource::Embedded()};
  const Presets* presets_ = nullptr;
};

TEST_F(PresetsTest, EveryPresetResolvesAsEformerUnderTheDefaultPartitionAxis) {
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"ColumnWise", "P(('fsdp', 'sp'), 'tp')"},
      {"RowWise", "P('tp', ('fsdp', 'sp'))"},
      {"SColumnWise", "P(('fsdp', 'sp'))"},
      {"SRowWise", "P('tp')"},
      {"Replicated", "P(None)"},
      {"ExpertColumnWise", "P('ep', 'fsdp', 'tp')"},
      {"ExpertRowWise", "P('ep', 'tp', 'fsdp')"},
      {"ExpertColumnWiseAlt", "P('ep', ('fsdp', 'sp'), 'tp')"},
      {"ExpertRowWiseAlt", "P('ep', 'tp', ('fsdp', 'sp'))"},
      {"UnifiedExpertColumnWise", "P(('fsdp', 'sp', 'ep'), None, 'tp')"},
      {"UnifiedExpertRowWise", "P(('fsdp', 'sp', 'ep'), 'tp', None)"},
      {"ExpertActivations", "P('dp', 'sp', 'ep', 'tp')"},
      {"ExpertActivationsAlt", "P('dp', 'sp', ('tp', 'fsdp'))"},
      {"ExpertTensorParallel", "P('tp', None, None)"},
      {"HiddenStateSharding", "P(('fsdp', 'dp'), 'sp', 'tp')"},
      {"AttnQSharding", "P(('fsdp', 'dp'), 'sp', 'tp', None)"},
      {"AttnKVSharding", "P(('fsdp', 'dp'), 'sp', 'tp', None)"},
  };
  Json config = DefaultConfig();
  for (const auto& [preset, spec] : expected) EXPECT_EQ(Resolve(preset, config), spec) << preset;
  // Decode equals train for every preset while decode_* fields keep their defaults.
  for (const auto& [preset, spec] : expected) EXPECT_EQ(Resolve(preset, config, Mode::kDecode), spec) << preset;
}

TEST_F(PresetsTest, MoEPresetsFollowTheExpertFlagsAsGetMoePartitionSpec) {
  struct Case {
    bool etm, fsdp_bound, sp_bound;
    const char* column;
    const char* row;
  };
  const Case cases[] = {
      {false, true, true, "P(('ep', 'sp', 'fsdp'), None, 'tp')", "P(('ep', 'sp', 'fsdp'), 'tp', None)"},
      {false, false, true, "P(('ep', 'sp'), None, 'tp')", "P(('ep', 'sp'), 'tp', None)"},
      {false, true, false, "P(('ep', 'fsdp'), None, 'tp')", "P(('ep', 'fsdp'), 'tp', None)"},
      {false, false, false, "P('ep', None, 'tp')", "P('ep', 'tp', None)"},
      {true, true, true, "P('tp', None, None)", "P('tp', None, None)"},
      {true, false, false, "P('tp', None, None)", "P('tp', None, None)"},
  };
  for (const Case& c : cases) {
    Json config = DefaultConfig();
    config["use_expert_tensor_mode"] = c.etm;
    config["fsdp_is_ep_bound"] = c.fsdp_bound;
    config["sp_is_ep_bound"] = c.sp_bound;
    EXPECT_EQ(Resolve("MoEColumnWise", config), c.column) << c.etm << c.fsdp_bound << c.sp_bound;
    EXPECT_EQ(Resolve("MoERowWise", config), c.row) << c.etm << c.fsdp_bound << c.sp_bound;
  }
}

TEST_F(PresetsTest, TokensFollowARenamedMeshAxis) {
  Json config = DefaultConfig();
  config["partition_axis"]["tensor_parallel_axis"] = "model";
  config["partition_axis"]["head_axis"] = "model";
  EXPECT_EQ(Resolve("ColumnWise", config), "P(('fsdp', 'sp'), 'model')");
  EXPECT_EQ(ResolveList({std::vector<std::string>{"head"}, std::vector<std::string>{"__HEAD__"}}, config),
            "P('model', 'model')");
  // Lower-case mesh names are literals; the upper-case or __X__ spelling is the token.
  EXPECT_EQ(ResolveList({std::vector<std::string>{"tp"}, std::vector<std::string>{"TP"}}, config), "P('tp', 'model')");
}

TEST_F(PresetsTest, CustomisedDecodeAxesApplyOnlyInGenerationModes) {
  // PartitionAxis.resolve_axis (eformer/escale/partition/manager.py) with customised decode axes.
  Json config = DefaultConfig();
  config["partition_axis"]["decode_batch_axis"] = "dp";
  config["partition_axis"]["decode_query_sequence_axis"] = "dp";
  config["partition_axis"]["decode_head_axis"] = nullptr;
  config["partition_axis"]["decode_key_sequence_axis"] = nullptr;
  std::vector<std::optional<std::vector<std::string>>> axes = {
      std::vector<std::string>{"BATCH"}, std::vector<std::string>{"QUERY_LENGTH"}, std::vector<std::string>{"HEAD"},
      std::vector<std::string>{"KV_LENGTH"}};
  EXPECT_EQ(ResolveList(axes, config, Mode::kDecode), "P('dp', 'dp', 'tp', 'sp')");
  EXPECT_EQ(ResolveList(axes, config, Mode::kTrain), "P(('fsdp', 'dp'), 'sp', 'tp', 'sp')");
}

TEST_F(PresetsTest, CompositeHoldingATupleTokenIsJaxsNestedTupleError) {
  EXPECT_NE(ResolveList({std::vector<std::string>{"BATCH", "tp"}}, DefaultConfig()).find("nested tuple"),
            std::string::npos);
}

TEST_F(PresetsTest, LiteralsInsideCompositesStayMeshAxes) {
  EXPECT_EQ(ResolveList({std::vector<std::string>{"tp", "dp"}}, DefaultConfig()), "P(('tp', 'dp'))");
  EXPECT_EQ(ResolveList({std::vector<std::string>{"tp", "FSDP"}}, DefaultConfig()), "P(('tp', 'fsdp'))");
  EXPECT_EQ(ResolveList({}, DefaultConfig()), "P()");
  EXPECT_EQ(ResolveList({std::nullopt}, DefaultConfig()), "P(None)");
}

class RuleSetTest : public PresetsTest {
 protected:
  StatusOr<RuleSet> Parse(const std::string& text) { return ParseRuleSet(text, "rules.yaml", *presets_); }
};

TEST_F(RuleSetTest, LookAroundIsReportedAtItsLineWithAHint) {
  auto set = Parse(
      "layout: easydel\nrules:\n  - {match: \"a\", spec: Replicated}\n  - {match: \"q(?!_norm)\", spec: "
      "ColumnWise}\n");
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().diag().loc.file, "rules.yaml");
  EXPECT_EQ(set.status().diag().loc.line, 4);
  EXPECT_NE(set.status().diag().message.find("invalid pattern"), std::string::npos);
  ASSERT_FALSE(set.status().diag().notes.empty());
  EXPECT_NE(set.status().diag().notes[0].find("look-around"), std::string::npos);
}

TEST_F(RuleSetTest, UnknownPresetGetsADidYouMean) {
  auto set = Parse("rules:\n  - {match: x, spec: ColumnWize}\n");
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.status().diag().message.find("did you mean 'ColumnWise'"), std::string::npos);
  EXPECT_EQ(set.status().diag().loc.pointer, "/rules/0/spec");
}

TEST_F(RuleSetTest, MalformedEntriesAreErrors) {
  EXPECT_FALSE(Parse("rules:\n  - {match: x, spec: [[a, [b]]]}\n").ok());
  EXPECT_FALSE(Parse("rules:\n  - {match: x, spec: [1]}\n").ok());
  EXPECT_FALSE(Parse("rules:\n  - {match: x}\n").ok());
  EXPECT_FALSE(Parse("rules:\n  - {match: x, spec: [null], colour: red}\n").ok());
  EXPECT_FALSE(Parse("layout: flax\nrules: []\n").ok());
  EXPECT_FALSE(Parse("rules: {}\n").ok());
  EXPECT_FALSE(ParseRuleSet("rules:\n  - {match: a, spec: [null]}\n  - {match: b, spec: [null]}\n", "r.yaml", *presets_,
                            /*max_rules=*/1)
                   .ok());
}

TEST_F(RuleSetTest, EmptySpecAndNullSpecStayDistinct) {
  auto set = Parse("rules:\n  - {match: a, spec: []}\n  - {match: b, spec: [null]}\n");
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_TRUE(set->rules[0].spec.dims.empty());
  EXPECT_EQ(set->rules[1].spec.dims.size(), 1u);
}

TEST_F(RuleSetTest, CasesAreParsedInOrder) {
  auto set = Parse(
      "rules:\n  - match: gate/kernel\n    spec: ColumnWise\n    cases:\n      - {when: use_expert_tensor_mode, "
      "spec: Replicated}\n");
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  ASSERT_EQ(set->rules[0].cases.size(), 1u);
  EXPECT_EQ(set->rules[0].cases[0].when.text(), "use_expert_tensor_mode");
}

TEST_F(RuleSetTest, FirstMatchWinsUnderUnanchoredSearch) {
  // EasyDeL 2024 llama rules replayed with re.search, as match_partition_rules
  // (eformer/escale/partition/constraints.py) applies them.
  auto set = Parse(
      "rules:\n"
      "  - {match: \"model/embed_tokens/embedding\", spec: [[fsdp, sp]]}\n"
      "  - {match: \"self_attn/(q_proj|k_proj|v_proj)/kernel\", spec: [[fsdp, sp], tp]}\n"
      "  - {match: \"self_attn/o_proj/kernel\", spec: [tp, [sp, fsdp]]}\n"
      "  - {match: \"mlp/down_proj/kernel\", spec: [[fsdp, sp]]}\n"
      "  - {match: \"input_layernorm/kernel\", spec: [null]}\n"
      "  - {match: \".*\", spec: [[fsdp, sp]]}\n");
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  auto matcher = RuleMatcher::Build(*set);
  ASSERT_TRUE(matcher.ok());
  EXPECT_EQ((*matcher)->FirstMatch("model/layers/31/self_attn/o_proj/kernel"), 2);
  EXPECT_EQ((*matcher)->FirstMatch("model/layers/0/self_attn/q_proj/bias"), 5);
  EXPECT_EQ((*matcher)->FirstMatch("model/layers/5/input_layernorm/kernel"), 4);
  EXPECT_EQ((*matcher)->AllMatches("model/layers/5/input_layernorm/kernel"), (std::vector<int>{4, 5}));
}

TEST_F(RuleSetTest, UnanchoredPitfallsBehaveAsPythonReSearch) {
  auto set = Parse("rules:\n  - {match: \"layers/1\", spec: [tp]}\n  - {match: \"norm/kernel\", spec: [null]}\n");
  ASSERT_TRUE(set.ok());
  auto matcher = RuleMatcher::Build(*set);
  ASSERT_TRUE(matcher.ok());
  EXPECT_EQ((*matcher)->FirstMatch("model/layers/12/x"), 0);
  EXPECT_EQ((*matcher)->FirstMatch("model/layers/2/input_layernorm/kernel"), 1);
  EXPECT_EQ((*matcher)->FirstMatch("model/embed"), std::nullopt);
}

TEST_F(PresetsTest, EveryBuiltinRuleFileParsesAndEveryFamilyHasRules) {
  for (const char* family : {"llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma",
                             "gemma2", "gemma3_text", "gemma3", "phi3", "deepseek_v2", "deepseek_v3", "gpt2"}) {
    auto set = library_.ForModelType(family);
    ASSERT_TRUE(set.ok()) << family << ": " << set.status().ToString();
    EXPECT_FALSE((*set)->rules.empty()) << family;
    EXPECT_TRUE(RuleMatcher::Build(**set).ok()) << family;
  }
  auto missing = library_.ForModelType("lama");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().diag().message.find("did you mean 'llama'"), std::string::npos);
}

}  // namespace
}  // namespace easyplan::rules
