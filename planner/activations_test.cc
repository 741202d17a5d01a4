// EasyDeL's activation shardings as unit tests: OperationMetadata.get_shardings
// (easydel/operations/_operation_meta.py), the residual-stream and loss constraints, the TransformerCache
// (easydel/caching/transformer/cache.py) and the expert specs (easydel/layers/moe/), in every
// mode and layout, for the default PartitionAxis and customised ones given as `--set` strings (resolved
// by the real resolver, so the decode_* derivations are EasyDeL's).
#include "planner/activations.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>

#include "core/document.h"
#include "core/json_parse.h"
#include "planner/layout.h"
#include "planner/spec_test_util.h"
#include "rules/rule_library.h"
#include "schemas/data_source.h"
#include "schemas/resolver.h"

namespace easyplan::planner {
namespace {

using plan_testing::FiveAxisMesh;
using plan_testing::P;

using Entry = PartitionSpec::Entry;
const Entry B = {"fsdp", "dp"};
const Entry N = {};
const Entry DP = {"dp"};
const Entry SP = {"sp"};
const Entry TP = {"tp"};
const Entry FSDP = {"fsdp"};

constexpr RuntimeMode kAllModes[] = {RuntimeMode::kTrain, RuntimeMode::kPrefill, RuntimeMode::kDecode,
                                     RuntimeMode::kInsert};

// Two customised PartitionAxis settings (C1, C2), as `--set` strings.
const std::vector<std::string> kC1 = {"partition_axis.decode_batch_axis=dp", "partition_axis.decode_head_axis=null"};
const std::vector<std::string> kC2 = {"partition_axis.kv_head_axis=null", "partition_axis.bias_head_sequence_axis=tp",
                                      "partition_axis.decode_batch_axis=dp",
                                      "partition_axis.decode_key_sequence_axis=fsdp"};

class ActivationsTest : public ::testing::Test {
 protected:
  ActivationsTest() : library_(schemas::DataSource::Embedded()), schemas_(schemas::DataSource::Embedded()) {
    auto text = schemas::DataSource::Embedded().Read("rules/_activations.yaml");
    EXPECT_TRUE(text.ok());
    auto table = ActivationTable::Parse(*text, "rules/_activations.yaml");
    EXPECT_TRUE(table.ok()) << table.status().ToString();
    table_ = std::move(*table);
    presets_ = *library_.GetPresets();
  }

  // A small Llama config (GQA: 32 heads, 8 kv heads) resolved with `sets`.
  Json Config(const std::vector<std::string>& sets = {}, const std::string& extra = "") {
    const std::string text = R"({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
        "num_key_value_heads": 8, "num_hidden_layers": 4, "vocab_size": 32000, "intermediate_size": 11008)" +
                             extra + "}";
    auto doc = ParseJsonDocument(text, "config.json");
    EXPECT_TRUE(doc.ok());
    schemas::ConfigInput input{std::move(*doc), std::nullopt, sets};
    auto resolved = schemas::ResolveConfig(input, schemas::ResolveOptions{}, schemas_);
    EXPECT_TRUE(resolved.ok()) << resolved.status().ToString();
    return resolved->config;
  }

  AttnShardingRules Rules(const Json& config, RuntimeMode mode, AttnLayout layout = AttnLayout::kBthd, bool mni = false,
                          std::optional<int> aux = std::nullopt) {
    auto rules = GetShardings(table_, *presets_, config, AttnOptions{mode, layout, mni, aux});
    EXPECT_TRUE(rules.ok()) << rules.status().ToString();
    return *rules;
  }

  PartitionSpec Resolve(const ActivationTable::Axes& axes, const Json& config, rules::AxisMode mode) {
    auto spec = ResolveAxes(axes, *presets_, config, mode);
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    return *spec;
  }

  // The residual preset `name` resolved for a tensor of `shape` (its integer mode) and corrected on `mesh`.
  PartitionSpec Residual(const std::string& name, const Json& config, const Shape& shape, const Mesh& mesh) {
    const ActivationTable::ResidualEntry* entry = table_.FindResidual(name);
    EXPECT_NE(entry, nullptr);
    const rules::AxisMode mode =
        entry->dynamic_dim && shape[*entry->dynamic_dim] == 1 ? rules::AxisMode::kGeneration : rules::AxisMode::kTrain;
    return CorrectSpec(shape, Resolve(entry->axes, config, mode), mesh, UnevenMode::kReplicate).spec;
  }

  static schemas::ModelDims DimsOf(const Json& config) {
    auto dims = schemas::ModelDimsOf(config);
    EXPECT_TRUE(dims.ok()) << dims.status().ToString();
    return dims.ok() ? *dims : schemas::ModelDims();
  }

  StatusOr<ActivationPlan> Build(const Json& config, const Mesh& mesh, RuntimeMode mode, std::optional<int64_t> batch,
                                 std::optional<int64_t> seq) {
    ActivationRequest request;
    request.table = &table_;
    request.presets = presets_;
    request.config = &config;
    const schemas::ModelDims dims = DimsOf(config);
    request.dims = &dims;
    request.mesh = mesh;
    request.attention.mode = mode;
    request.batch = batch;
    request.seq = seq;
    return BuildActivationPlan(request);
  }

  static const Finding* FindCode(const ActivationPlan& plan, FindingCode code) {
    for (const Finding& finding : plan.findings) {
      if (finding.code == code) return &finding;
    }
    return nullptr;
  }

  rules::RuleLibrary library_;
  schemas::SchemaSet schemas_;
  ActivationTable table_;
  const rules::Presets* presets_ = nullptr;
};

// ---- modes and layouts -------------------------------------------------------------------------------

TEST(RuntimeModeTest, NamesConstantsAndGenerationModes) {
  EXPECT_EQ(ParseRuntimeMode("decode"), RuntimeMode::kDecode);
  EXPECT_EQ(ParseRuntimeMode("__autoregressive__"), RuntimeMode::kDecode);
  EXPECT_EQ(ParseRuntimeMode("__prefill__"), RuntimeMode::kPrefill);
  EXPECT_EQ(ParseRuntimeMode("generate"), std::nullopt);
  EXPECT_FALSE(IsGenerationMode(RuntimeMode::kTrain));
  EXPECT_FALSE(IsGenerationMode(RuntimeMode::kPrefill));  // prefill resolves like train
  EXPECT_TRUE(IsGenerationMode(RuntimeMode::kDecode));
  EXPECT_TRUE(IsGenerationMode(RuntimeMode::kInsert));  // insert resolves like decode
  EXPECT_EQ(RuntimeModeConstant(RuntimeMode::kInsert), "__insert__");
}

TEST(AttnLayoutTest, ThdIsRejectedAsEasyDeLRejectsIt) {
  EXPECT_EQ(*ParseAttnLayout("bthd"), AttnLayout::kBthd);
  EXPECT_EQ(*ParseAttnLayout("bhtd"), AttnLayout::kBhtd);
  auto thd = ParseAttnLayout("thd");
  ASSERT_FALSE(thd.ok());
  EXPECT_EQ(thd.status().diag().message,
            "--layout thd is not implemented by EasyDeL: OperationMetadata.get_shardings raises "
            "NotImplementedError(\"Layout 'thd' is not implemented\")");
  auto other = ParseAttnLayout("tbhd");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().diag().message, "--layout 'tbhd' is not an attention layout");
}

TEST(ActivationTableTest, ParseErrorsNameTheFileAndKey) {
  auto bad = ActivationTable::Parse("attention:\n  query3d: {axes: [BATCH], bthdd: [BATCH]}\n", "t.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("t.yaml:2"), std::string::npos) << bad.status().ToString();
  EXPECT_NE(bad.status().ToString().find("bthdd"), std::string::npos);
  auto missing = ActivationTable::Parse("attention:\n  query3d: {axes: [BATCH]}\n", "t.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().ToString().find("missing the field 'query'"), std::string::npos);
}

TEST_F(ActivationsTest, KernelAndRaggedSectionsRejectMalformedEntries) {
  // The real file, with one kernel or ragged-cache entry broken at a time.
  auto text = schemas::DataSource::Embedded().Read("rules/_activations.yaml");
  ASSERT_TRUE(text.ok());
  struct Case {
    std::string from, to, phrase;
  };
  const Case cases[] = {
      {"    mode_dim: 2\n    layout: bhtd", "    mode_dim: 3\n    layout: bhtd", "get_mode tests dim 1 or 2"},
      {"    layout: bhtd", "    layout: [bhtd]", "expected a string"},
      {"      cu_seqlens: {rank: 1}", "      cu_seqlens: {}", "either a field or a rank"},
      {"      query: {field: query, keep: [0, 2], tensor: query}", "      query: {field: queries, tensor: query}",
       "'queries' is not an AttnShardingRules field"},
      {"      bias: {field: bias, keep: [0, 1], tensor: bias}", "      bias: {field: bias, keep: [-1], tensor: bias}",
       "a dim index is an integer from 0 to 7"},
      {"      output: {field: output, keep: [0, 2], tensor: output}", "      output: {field: output, tensor: outputs}",
       "'outputs' is not a kernel tensor"},
      {"    decode_only: true", "    decode_only: yes please", "expected true or false"},
      {"  page: ATTN_DP", "  page: [ATTN_DP]", "expected one token"},
      {"  upcast: [bfloat16, float32]", "  upcast: bfloat16", "expected a list of dtype names"},
  };
  for (const Case& c : cases) {
    std::string broken = *text;
    const size_t at = broken.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    broken.replace(at, c.from.size(), c.to);
    auto table = ActivationTable::Parse(broken, "rules/_activations.yaml");
    ASSERT_FALSE(table.ok()) << c.to;
    EXPECT_NE(table.status().ToString().find(c.phrase), std::string::npos) << table.status().ToString();
  }
  EXPECT_NE(table_.FindKernel("autoregressive_decodeattn"), nullptr);
  EXPECT_EQ(table_.FindKernel("autoregressive_decodeattn"), table_.FindKernel("decode"));
  EXPECT_EQ(table_.FindKernel("splash"), nullptr);
}

// ---- The default PartitionAxis, identical in all four modes ------------------------------------------

TEST_F(ActivationsTest, Section22DefaultsInEveryModeLayoutAndMni) {
  const Json config = Config();
  for (RuntimeMode mode : kAllModes) {
    for (bool mni : {false, true}) {
      SCOPED_TRACE(std::string(RuntimeModeName(mode)) + (mni ? " mni" : ""));
      const AttnShardingRules bthd = Rules(config, mode, AttnLayout::kBthd, mni);
      EXPECT_EQ(bthd.query3d, P({B, TP, N}));
      EXPECT_EQ(bthd.query, P({B, SP, TP, N}));
      EXPECT_EQ(bthd.output, bthd.query);
      EXPECT_EQ(bthd.key, P({B, SP, TP, N}));
      EXPECT_EQ(bthd.value, bthd.key);
      EXPECT_EQ(bthd.bias, P({B, N, SP, N}));
      EXPECT_EQ(bthd.mask, P({B, N, SP, N}));
      EXPECT_EQ(bthd.q_segment_ids, P({B, SP}));
      EXPECT_EQ(bthd.kv_segment_ids, P({B, SP}));
      EXPECT_EQ(bthd.softmax_aux, std::nullopt);

      const AttnShardingRules bhtd = Rules(config, mode, AttnLayout::kBhtd, mni);
      EXPECT_EQ(bhtd.query3d, P({B, TP, N}));  // layout-independent
      EXPECT_EQ(bhtd.query, P({B, TP, SP, N}));
      EXPECT_EQ(bhtd.output, bhtd.query);
      EXPECT_EQ(bhtd.key, P({B, TP, SP, N}));
      EXPECT_EQ(bhtd.value, bhtd.key);
      EXPECT_EQ(bhtd.bias, P({B, N, SP, N}));
      EXPECT_EQ(bhtd.mask, P({B, N, SP, N}));
      EXPECT_EQ(bhtd.q_segment_ids, P({B, SP}));
      EXPECT_EQ(bhtd.kv_segment_ids, P({B, SP}));

      for (AttnLayout layout : {AttnLayout::kBthd, AttnLayout::kBhtd}) {
        EXPECT_EQ(Rules(config, mode, layout, mni, 2).softmax_aux, P({N, TP}));
        EXPECT_EQ(Rules(config, mode, layout, mni, 1).softmax_aux, P({TP}));
        EXPECT_EQ(Rules(config, mode, layout, mni, 3).softmax_aux, P({TP}));  // any rank but 2: [HEAD]
      }
    }
  }
}

TEST_F(ActivationsTest, AttnFieldsListsTheTenFieldsInOrder) {
  const AttnShardingRules rules = Rules(Config(), RuntimeMode::kTrain, AttnLayout::kBthd, false, 2);
  std::vector<std::string> names;
  for (const auto& [name, spec] : AttnFields(rules)) {
    names.push_back(name);
    EXPECT_NE(spec, nullptr);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"query3d", "query", "key", "value", "bias", "mask", "output",
                                             "q_segment_ids", "kv_segment_ids", "softmax_aux"}));
}

// ---- C1: decode_batch_axis="dp", decode_head_axis=None -----------------------------------------------

TEST_F(ActivationsTest, Section23C1TrainAndPrefillAreTheDefaults) {
  const Json config = Config(kC1);
  for (RuntimeMode mode : {RuntimeMode::kTrain, RuntimeMode::kPrefill}) {
    for (AttnLayout layout : {AttnLayout::kBthd, AttnLayout::kBhtd}) {
      const AttnShardingRules c1 = Rules(config, mode, layout);
      const AttnShardingRules defaults = Rules(Config(), mode, layout);
      for (size_t i = 0; i < AttnFields(c1).size() - 1; ++i) {
        EXPECT_EQ(*AttnFields(c1)[i].second, *AttnFields(defaults)[i].second) << AttnFields(c1)[i].first;
      }
    }
  }
}

TEST_F(ActivationsTest, Section23C1DecodeAndInsertUseDpForBatchAndKeepTp) {
  const Json config = Config(kC1);
  for (RuntimeMode mode : {RuntimeMode::kDecode, RuntimeMode::kInsert}) {
    for (bool mni : {false, true}) {
      SCOPED_TRACE(std::string(RuntimeModeName(mode)) + (mni ? " mni" : ""));
      const AttnShardingRules bthd = Rules(config, mode, AttnLayout::kBthd, mni);
      EXPECT_EQ(bthd.query3d, P({DP, TP, N}));
      EXPECT_EQ(bthd.query, P({DP, SP, TP, N}));
      EXPECT_EQ(bthd.output, P({DP, SP, TP, N}));
      EXPECT_EQ(bthd.key, P({DP, SP, TP, N}));
      EXPECT_EQ(bthd.value, P({DP, SP, TP, N}));
      EXPECT_EQ(bthd.bias, P({DP, N, SP, N}));
      EXPECT_EQ(bthd.mask, P({DP, N, SP, N}));
      EXPECT_EQ(bthd.q_segment_ids, P({DP, SP}));
      EXPECT_EQ(bthd.kv_segment_ids, P({DP, SP}));
      const AttnShardingRules bhtd = Rules(config, mode, AttnLayout::kBhtd, mni);
      EXPECT_EQ(bhtd.query3d, P({DP, TP, N}));
      EXPECT_EQ(bhtd.query, P({DP, TP, SP, N}));
      EXPECT_EQ(bhtd.output, P({DP, TP, SP, N}));
      EXPECT_EQ(bhtd.key, P({DP, TP, SP, N}));
      EXPECT_EQ(bhtd.value, P({DP, TP, SP, N}));
      EXPECT_EQ(bhtd.bias, P({DP, N, SP, N}));
      EXPECT_EQ(bhtd.mask, P({DP, N, SP, N}));
      EXPECT_EQ(bhtd.q_segment_ids, P({DP, SP}));
      EXPECT_EQ(bhtd.kv_segment_ids, P({DP, SP}));
    }
  }
}

// ---- C2: kv_head_axis=None, bias_head_sequence_axis="tp", decode batch dp, decode key seq fsdp --------

TEST_F(ActivationsTest, Section23C2EveryRowModeAndLayout) {
  const Json config = Config(kC2);
  for (RuntimeMode mode : kAllModes) {
    SCOPED_TRACE(RuntimeModeName(mode));
    const bool decode = IsGenerationMode(mode);
    const Entry batch = decode ? DP : B;
    const Entry kv_seq = decode ? FSDP : SP;
    const AttnShardingRules bthd = Rules(config, mode);
    EXPECT_EQ(bthd.query, P({batch, SP, TP, N}));
    EXPECT_EQ(bthd.output, bthd.query);
    EXPECT_EQ(bthd.key, P({batch, kv_seq, N, N}));
    EXPECT_EQ(bthd.value, P({batch, kv_seq, N, N}));
    EXPECT_EQ(bthd.bias, P({batch, TP, SP, N}));
    EXPECT_EQ(bthd.mask, P({batch, N, SP, N}));
    EXPECT_EQ(bthd.q_segment_ids, P({batch, SP}));
    EXPECT_EQ(bthd.kv_segment_ids, P({batch, kv_seq}));
    EXPECT_EQ(Rules(config, mode, AttnLayout::kBthd, false, 2).softmax_aux, P({N, N}));  // a real spec, not None
    EXPECT_EQ(Rules(config, mode, AttnLayout::kBthd, false, 1).softmax_aux, P({TP}));
    const AttnShardingRules mni = Rules(config, mode, AttnLayout::kBthd, true);
    EXPECT_EQ(mni.key, P({batch, kv_seq, TP, N}));
    EXPECT_EQ(mni.value, P({batch, kv_seq, TP, N}));
    EXPECT_EQ(Rules(config, mode, AttnLayout::kBthd, true, 2).softmax_aux, P({N, N}));  // KV_HEAD even under mni
    // bhtd swaps entries 1 and 2 of query, key and value; the rest is layout-independent.
    const AttnShardingRules bhtd = Rules(config, mode, AttnLayout::kBhtd);
    EXPECT_EQ(bhtd.query, P({batch, TP, SP, N}));
    EXPECT_EQ(bhtd.output, bhtd.query);
    EXPECT_EQ(bhtd.key, P({batch, N, kv_seq, N}));
    EXPECT_EQ(bhtd.value, P({batch, N, kv_seq, N}));
    EXPECT_EQ(bhtd.bias, bthd.bias);
    EXPECT_EQ(bhtd.mask, bthd.mask);
    EXPECT_EQ(bhtd.kv_segment_ids, bthd.kv_segment_ids);
    const AttnShardingRules bhtd_mni = Rules(config, mode, AttnLayout::kBhtd, true);
    EXPECT_EQ(bhtd_mni.key, P({batch, TP, kv_seq, N}));
  }
}

// ---- None falls back, an empty value replicates (eformer PartitionAxis.resolve_axis) ------------------

TEST_F(ActivationsTest, DecodeNullFallsBackToTrainButAnEmptyListReplicates) {
  const Json fallback = Config({"partition_axis.decode_head_axis=null"});
  EXPECT_EQ(Rules(fallback, RuntimeMode::kDecode).query, P({B, SP, TP, N}));  // a no-op
  const Json empty = Config({"partition_axis.decode_head_axis=[]"});
  EXPECT_EQ(Rules(empty, RuntimeMode::kDecode).query, P({B, SP, N, N}));
  EXPECT_EQ(Rules(empty, RuntimeMode::kInsert).query, P({B, SP, N, N}));
  EXPECT_EQ(Rules(empty, RuntimeMode::kTrain).query, P({B, SP, TP, N}));
  const Json blank = Config({"partition_axis.decode_head_axis=\"\""});
  EXPECT_EQ(Rules(blank, RuntimeMode::kDecode).query, P({B, SP, N, N}));  // "" is falsy: None
}

TEST_F(ActivationsTest, ATrainFieldSetToNullIsUnshardedInEveryMode) {
  const Json config = Config({"partition_axis.kv_head_axis=null"});
  for (RuntimeMode mode : kAllModes) EXPECT_EQ(Rules(config, mode).key, P({B, SP, N, N}));
}

TEST_F(ActivationsTest, DecodeQuerySequenceAndAttentionDimsFallBackUntilSet) {
  const Json config = Config({"partition_axis.decode_query_sequence_axis=dp", "partition_axis.attention_dim_axis=ep"});
  EXPECT_EQ(Rules(config, RuntimeMode::kTrain).query, P({B, SP, TP, {"ep"}}));
  EXPECT_EQ(Rules(config, RuntimeMode::kDecode).query, P({B, DP, TP, {"ep"}}));  // decode_attention_dim_axis: None
}

TEST_F(ActivationsTest, RenamedMeshAxesFollowThrough) {
  const Json config = Config({"partition_axis.data_parallel_axis=data", "partition_axis.tensor_parallel_axis=model",
                              "partition_axis.sequence_parallel_axis=seq"});
  const AttnShardingRules rules = Rules(config, RuntimeMode::kDecode);
  EXPECT_EQ(rules.query, P({{"fsdp", "data"}, {"seq"}, {"model"}, N}));
}

// ---- Residual stream and logits (easydel/infra/loss_utils.py ForCausalLMLoss) -------------------------

TEST_F(ActivationsTest, Section3PresetsRawDefaultAndC1Decode) {
  const Json defaults = Config();
  const Json c1 = Config(kC1);
  const auto raw = [&](const std::string& name, const Json& config, rules::AxisMode mode) {
    return Resolve(table_.FindResidual(name)->axes, config, mode);
  };
  for (rules::AxisMode mode : {rules::AxisMode::kTrain, rules::AxisMode::kGeneration}) {
    EXPECT_EQ(raw("hidden_state", defaults, mode), P({B, SP, TP}));
    EXPECT_EQ(raw("attn_q", defaults, mode), P({B, SP, TP, N}));
    EXPECT_EQ(raw("attn_kv", defaults, mode), P({B, SP, TP, N}));
  }
  EXPECT_EQ(raw("hidden_state", c1, rules::AxisMode::kGeneration), P({DP, SP, TP}));
  EXPECT_EQ(raw("attn_q", c1, rules::AxisMode::kGeneration), P({DP, SP, TP, N}));
  EXPECT_EQ(raw("attn_kv", c1, rules::AxisMode::kGeneration), P({DP, SP, TP, N}));
  EXPECT_EQ(raw("hidden_state", c1, rules::AxisMode::kTrain), P({B, SP, TP}));
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
  auto train = Build(Config(), mesh, RuntimeMode::kTrain, std::nullopt, std::nullopt);
  ASSERT_TRUE(train.ok()) << train.status().ToString();
  EXPECT_EQ(train->logits, P({B, SP, TP}));
  EXPECT_EQ(train->labels, P({B, SP}));
  for (RuntimeMode mode : {RuntimeMode::kPrefill, RuntimeMode::kDecode, RuntimeMode::kInsert}) {
    auto plan = Build(Config(), mesh, mode, std::nullopt, std::nullopt);
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->logits, std::nullopt);
  }
  // The loss uses hidden_state_axis for the vocabulary, with no decode variant.
  EXPECT_EQ(Build(Config(kC1), mesh, RuntimeMode::kTrain, std::nullopt, std::nullopt)->logits, P({B, SP, TP}));
  const Json hidden_dp = Config({"partition_axis.hidden_state_axis=dp", "partition_axis.vocab_axis=ep"});
  EXPECT_EQ(Build(hidden_dp, mesh, RuntimeMode::kTrain, std::nullopt, std::nullopt)->logits, P({B, SP, DP}));
  // Vocab 32000 keeps tp; 32001 drops it.
  const ActivationTable::ResidualEntry* logits = table_.FindResidual("logits");
  EXPECT_EQ(CorrectSpec(Shape{8, 2048, 32000}, Resolve(logits->axes, Config(), rules::AxisMode::kTrain), mesh,
                        UnevenMode::kReplicate)
                .spec,
            P({B, SP, TP}));
  EXPECT_EQ(CorrectSpec(Shape{8, 2048, 32001}, Resolve(logits->axes, Config(), rules::AxisMode::kTrain), mesh,
                        UnevenMode::kReplicate)
                .spec,
            P({B, SP, N}));
}

TEST_F(ActivationsTest, Section24VanillaDecodeExampleUnderC1) {
  // C1 on dp2,fsdp2,ep1,tp2,sp2: decode query (8, 1, 32, 128) and cache KV (8, 4096, 8, 128).
  const Mesh mesh = FiveAxisMesh(2, 2, 1, 2, 2);
  const AttnShardingRules rules = Rules(Config(kC1), RuntimeMode::kDecode);
  EXPECT_EQ(CorrectSpec(Shape{8, 1, 32, 128}, rules.query, mesh, UnevenMode::kReplicate).spec, P({DP, N, TP, N}));
  EXPECT_EQ(CorrectSpec(Shape{8, 4096, 8, 128}, rules.key, mesh, UnevenMode::kReplicate).spec, P({DP, SP, TP, N}));
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
  EXPECT_EQ(spec_of(*Build(c1, mesh, RuntimeMode::kDecode, std::nullopt, std::nullopt), "hidden_state"),
            P({DP, SP, TP}));
  EXPECT_EQ(spec_of(*Build(c1, mesh, RuntimeMode::kInsert, std::nullopt, std::nullopt), "hidden_state"),
            P({B, SP, TP}));  // the presets' own integer mode: T > 1 is train
  EXPECT_EQ(spec_of(*Build(c1, mesh, RuntimeMode::kTrain, 8, 1), "hidden_state"), P({DP, SP, TP}));
}

// ---- The TransformerCache (easydel/caching/transformer/cache.py) --------------------------------------

struct CacheRow {
  std::vector<std::string> sets;
  std::array<int64_t, 5> mesh;
  std::array<int64_t, 4> shape;
  PartitionSpec stored;
  PartitionSpec index;
};

TEST_F(ActivationsTest, Section42CacheTable) {
  const CacheRow rows[] = {
      {{}, {2, 2, 1, 2, 2}, {8, 4096, 8, 128}, P({B, SP, TP, N}), P({B})},
      {{}, {2, 2, 1, 2, 2}, {1, 4096, 8, 128}, P({N, SP, TP, N}), P({N})},
      {{}, {1, 1, 1, 4, 1}, {4, 2048, 2, 128}, P({B, SP, N, N}), P({B})},
      {{}, {1, 2, 1, 2, 2}, {4, 4095, 8, 128}, P({B, N, TP, N}), P({B})},
      {kC2, {2, 2, 1, 2, 2}, {8, 4096, 8, 128}, P({B, SP, N, N}), P({B})},
  };
  for (const CacheRow& row : rows) {
    const Json config = Config(row.sets);
    const Mesh mesh = FiveAxisMesh(row.mesh[0], row.mesh[1], row.mesh[2], row.mesh[3], row.mesh[4]);
    const Shape shape{row.shape[0], row.shape[1], row.shape[2], row.shape[3]};
    SCOPED_TRACE(mesh.ToString() + " " + shape.ToString());
    // Stored with the train (prefill) rules in every mode.
    for (RuntimeMode mode : kAllModes) {
      auto plan = Build(config, mesh, mode, std::nullopt, std::nullopt);
      ASSERT_TRUE(plan.ok());
      EXPECT_EQ(plan->cache_key, Resolve(*table_.FindCache("key"), config, rules::AxisMode::kTrain));
    }
    std::string unknown;
    const PartitionSpec raw = Resolve(*table_.FindCache("key"), config, rules::AxisMode::kTrain);
    EXPECT_EQ(SanitizeCacheSpec(raw, {shape, shape}, mesh, &unknown), row.stored);
    EXPECT_TRUE(unknown.empty());
    const PartitionSpec index = Resolve(*table_.FindCache("indexs"), config, rules::AxisMode::kTrain);
    EXPECT_EQ(SanitizeCacheSpec(index, {Shape{row.shape[0]}}, mesh, nullptr), row.index);
  }
}

TEST_F(ActivationsTest, Section42CacheRowsThroughThePlan) {
  // Row 4: a 4095-token window on fsdp2,tp2,sp2 drops sp; the plan reports it once per dim with a count.
  const Json config = Config({}, R"(, "sliding_window": 4095)");
  auto plan = Build(config, FiveAxisMesh(1, 2, 1, 2, 2), RuntimeMode::kPrefill, 4, 8192);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const ActivationTensor* key = nullptr;
  for (const ActivationTensor& tensor : plan->tensors) {
    if (tensor.name == "kv_cache.key[sliding 4095]") key = &tensor;
  }
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(key->shape, (Shape{4, 4095, 8, 128}));
  EXPECT_EQ(key->effective, P({B, N, TP, N}));
  EXPECT_EQ(key->layers, 4);
  EXPECT_EQ(key->shard_shape, (Shape{2, 4095, 4, 128}));
  const Finding* uneven = FindCode(*plan, FindingCode::kUnevenReplaced);
  ASSERT_NE(uneven, nullptr);
  EXPECT_EQ(uneven->message,
            "kv_cache.key [4, 4095, 8, 128]: dim 1 (4095) is not divisible by sp=2, so the cache sanitiser leaves it "
            "unsharded");
  EXPECT_EQ(uneven->count, 4);
}

TEST_F(ActivationsTest, Section42CacheBytesOfTheWholeCache) {
  // GQA: 4 layers of key + value (2, 8192, 8, 128) float32 + indexs/starts (2,) int32, on tp=2, sp=2.
  const Json config = Config();
  auto plan = Build(config, FiveAxisMesh(1, 1, 1, 2, 2), RuntimeMode::kDecode, 2, 8192);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const int64_t kv = 2 * 8192 * 8 * 128 * 4;
  EXPECT_EQ(plan->cache_bytes, 4 * (2 * kv + 2 * 8));
  EXPECT_EQ(plan->cache_bytes_per_device, 4 * (2 * kv / 4 + 2 * 8));
  EXPECT_EQ(plan->cache_key, P({B, SP, TP, N}));
  EXPECT_FALSE(plan->cache_reshard);
  EXPECT_EQ(FindCode(*plan, FindingCode::kCacheReshard), nullptr);
}

TEST_F(ActivationsTest, Section42DecodeReshardUnderC1AndC2) {
  const Mesh mesh = FiveAxisMesh(2, 2, 1, 2, 2);
  auto c1 = Build(Config(kC1), mesh, RuntimeMode::kDecode, 8, 4096);
  ASSERT_TRUE(c1.ok());
  EXPECT_EQ(c1->cache_key, P({B, SP, TP, N}));
  EXPECT_EQ(c1->cache_decode_key, P({DP, SP, TP, N}));
  EXPECT_TRUE(c1->cache_reshard);
  const Finding* reshard = FindCode(*c1, FindingCode::kCacheReshard);
  ASSERT_NE(reshard, nullptr);
  EXPECT_EQ(reshard->severity, Severity::kWarning);
  EXPECT_EQ(reshard->message,
            "kv_cache.key: the cache is stored as P(('fsdp', 'dp'), 'sp', 'tp', None) (prefill rules) but a decode "
            "step constrains it to P('dp', 'sp', 'tp', None) (decode rules), so XLA reshards the whole cache at every "
            "step");

  auto c2 = Build(Config(kC2), mesh, RuntimeMode::kDecode, 8, 4096);
  ASSERT_TRUE(c2.ok());
  EXPECT_EQ(c2->cache_key, P({B, SP, N, N}));
  EXPECT_EQ(c2->cache_decode_key, P({DP, FSDP, N, N}));
  EXPECT_TRUE(c2->cache_reshard);
  // Train mode has no decode step: the flag is set, but no finding.
  auto c2_train = Build(Config(kC2), mesh, RuntimeMode::kTrain, std::nullopt, std::nullopt);
  EXPECT_TRUE(c2_train->cache_reshard);
  EXPECT_EQ(FindCode(*c2_train, FindingCode::kCacheReshard), nullptr);
  // When fsdp = 1, ('fsdp', 'dp') and 'dp' are the same layout: no reshard.
  auto same = Build(Config(kC1), FiveAxisMesh(2, 1, 1, 2, 1), RuntimeMode::kDecode, 8, 4096);
  EXPECT_FALSE(same->cache_reshard);
}

TEST_F(ActivationsTest, UseShardedKvCachingChangesNothing) {
  const Mesh mesh = FiveAxisMesh(1, 2, 1, 2, 2);
  auto plain = Build(Config(), mesh, RuntimeMode::kDecode, 4, 1024);
  auto sharded = Build(Config({"use_sharded_kv_caching=true", "kv_cache_sharding_sequence_axis_name=tp"}), mesh,
                       RuntimeMode::kDecode, 4, 1024);
  ASSERT_TRUE(plain.ok() && sharded.ok());
  EXPECT_TRUE(sharded->use_sharded_kv_caching);
  EXPECT_EQ(sharded->kv_cache_sharding_sequence_axis_name, Json("tp"));
  EXPECT_EQ(plain->cache_key, sharded->cache_key);
  ASSERT_EQ(plain->tensors.size(), sharded->tensors.size());
  for (size_t i = 0; i < plain->tensors.size(); ++i) {
    EXPECT_EQ(plain->tensors[i].effective, sharded->tensors[i].effective);
  }
}

TEST_F(ActivationsTest, CacheGeometryOfGqaSlidingAndMla) {
  CacheGeometry gqa = CacheGeometryOf(DimsOf(Config()));
  EXPECT_EQ(gqa.key_heads, 8);
  EXPECT_EQ(gqa.key_dim, 128);  // hidden_size / num_attention_heads
  EXPECT_EQ(gqa.layers, 4);
  EXPECT_EQ(gqa.sliding, (std::vector<int64_t>{0, 0, 0, 0}));
  const Json types = Json::parse(R"({"num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
      "num_hidden_layers": 4, "sliding_window": 1024,
      "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"]})");
  EXPECT_EQ(CacheGeometryOf(DimsOf(types)).sliding, (std::vector<int64_t>{1024, 0, 1024, 0}));
  const Json disabled = Json::parse(R"({"num_attention_heads": 8, "num_hidden_layers": 2, "hidden_size": 512,
      "sliding_window": 4096, "use_sliding_window": false})");
  EXPECT_EQ(CacheGeometryOf(DimsOf(disabled)).sliding, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(CacheGeometryOf(DimsOf(disabled)).key_heads, 8);  // no kv heads: the attention heads
  const Json mla = Json::parse(R"({"num_attention_heads": 128, "num_key_value_heads": 128, "num_hidden_layers": 61,
      "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "head_dim": 64})");
  const CacheGeometry g = CacheGeometryOf(DimsOf(mla));
  EXPECT_TRUE(g.mla);
  EXPECT_EQ(g.key_heads, 128);
  EXPECT_EQ(g.key_dim, 192);
  EXPECT_EQ(g.value_dim, 128);
}

TEST_F(ActivationsTest, ChunkedLayersKeepTheirChunkAndLinearLayersAState) {
  // Llama 4: chunked layers keep attention_chunk_size tokens; Qwen3-Next: linear layers keep no keys.
  const Json config = Config({}, R"(, "attention_chunk_size": 1024, "linear_num_key_heads": 2,
      "linear_num_value_heads": 4, "linear_key_head_dim": 16, "linear_value_head_dim": 32, "linear_conv_kernel_dim": 4,
      "layer_types": ["chunked_attention", "full_attention", "linear_attention", "linear_attention"])");
  const CacheGeometry geometry = CacheGeometryOf(DimsOf(config));
  EXPECT_EQ(geometry.sliding, (std::vector<int64_t>{1024, 0, 0, 0}));
  EXPECT_EQ(geometry.chunked, (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(geometry.kv_layers, 2);
  EXPECT_EQ(geometry.linear_state.layers, 2);
  EXPECT_EQ(geometry.linear_state.conv_dim, 2 * 2 * 16 + 4 * 32);

  auto plan = Build(config, FiveAxisMesh(1, 1, 1, 1, 1), RuntimeMode::kDecode, 2, 4096);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  std::map<std::string, const ActivationTensor*> rows;
  for (const ActivationTensor& tensor : plan->tensors) rows[tensor.name] = &tensor;
  ASSERT_TRUE(rows.count("kv_cache.key") && rows.count("kv_cache.key[chunked 1024]"));
  EXPECT_EQ(rows["kv_cache.key"]->layers, 1);
  EXPECT_EQ(rows["kv_cache.key[chunked 1024]"]->shape, (Shape{2, 1024, 8, 128}));
  ASSERT_TRUE(rows.count("linear_state.conv") && rows.count("linear_state.recurrent"));
  EXPECT_EQ(rows["linear_state.conv"]->shape, (Shape{2, 192, 4}));
  EXPECT_EQ(rows["linear_state.recurrent"]->shape, (Shape{2, 4, 16, 32}));
  EXPECT_EQ(rows["linear_state.recurrent"]->dtype, DType::kFloat32);
  const int64_t kv_bytes = 2 * 8 * 128 * 4;  // per token, key + value, float32 (the test config's kvdtype)
  const int64_t index_bytes = 2 * 2 * 4;     // indexs + starts per layer
  const int64_t state_bytes = 2 * (2 * 192 * 4 * 4 + 2 * 4 * 16 * 32 * 4);
  EXPECT_EQ(plan->cache_bytes, kv_bytes * 2 * (4096 + 1024) + 2 * index_bytes + state_bytes);
}

TEST_F(ActivationsTest, CacheSanitiserNeedsBothKeyAndValueAndReportsUnknownAxes) {
  const Mesh mesh = FiveAxisMesh(1, 1, 1, 4, 1);
  std::string unknown;
  // MLA-like: the key dim 192 divides by 4 but a value dim of 6 would not.
  EXPECT_EQ(SanitizeCacheSpec(P({N, N, N, TP}), {Shape{1, 8, 1, 192}, Shape{1, 8, 1, 6}}, mesh, &unknown),
            P({N, N, N, N}));
  EXPECT_EQ(SanitizeCacheSpec(P({{"xp"}, N, TP, N}), {Shape{8, 8, 8, 8}}, mesh, &unknown), P({{"xp"}, N, TP, N}));
  EXPECT_EQ(unknown, "xp");
}

TEST_F(ActivationsTest, SameLayoutIgnoresSizeOneAxesAndTrailingNones) {
  const Mesh mesh = FiveAxisMesh(2, 1, 1, 2, 1);
  EXPECT_TRUE(SameLayout(P({B, SP, TP, N}), P({DP, N, TP}), mesh));
  EXPECT_FALSE(SameLayout(P({B, SP, TP, N}), P({DP, N, N, N}), mesh));
}

// ---- findings from shapes -----------------------------------------------------------------------------

TEST_F(ActivationsTest, DecodeFindingsForBatchOneAndSequenceParallelism) {
  // batch 1 over fsdp=8; decode with sp=2; 8 kv heads over tp=16.
  auto batch = Build(Config(), FiveAxisMesh(1, 8, 1, 1, 1), RuntimeMode::kDecode, 1, 2048);
  ASSERT_TRUE(batch.ok());
  ASSERT_FALSE(batch->findings.empty());
  EXPECT_EQ(batch->findings.front().code, FindingCode::kUnevenReplaced);
  EXPECT_EQ(batch->findings.front().message,
            "decode attention.query3d [1, 32, 128]: dim 0 (1) is not divisible by fsdp=8 x dp=1 = 8, so eformer's "
            "correction leaves it unsharded");
  EXPECT_EQ(batch->findings.front().notes,
            (std::vector<std::string>{"dim 0 shards over fsdp x dp when it is a multiple of 8"}));

  auto sp = Build(Config(), FiveAxisMesh(1, 1, 1, 1, 2), RuntimeMode::kDecode, 4, 2048);
  ASSERT_TRUE(sp.ok());
  bool query_seq = false;
  for (const Finding& finding : sp->findings) {
    query_seq = query_seq || finding.message.starts_with(
                                 "decode attention.query [4, 1, 32, 128]: dim 1 (1) is not "
                                 "divisible by sp=2");
  }
  EXPECT_TRUE(query_seq);

  auto heads = Build(Config(), FiveAxisMesh(1, 1, 1, 16, 1), RuntimeMode::kTrain, 16, 128);
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
  auto plan = Build(Config(kC1), mesh, RuntimeMode::kDecode, 4, 64);
  ASSERT_TRUE(plan.ok());
  ASSERT_FALSE(plan->findings.empty());
  EXPECT_EQ(plan->findings.front().code, FindingCode::kUnknownAxis);
  EXPECT_EQ(plan->findings.front().severity, Severity::kError);
}

// ---- Expert specs (easydel/layers/moe/_moe_module.py, _communication_utils.py) ------------------------

struct ExpertVariant {
  std::vector<std::string> sets;
  PartitionSpec column, row;
};

TEST_F(ActivationsTest, Section52ModuleViewSpecsEveryVariant) {
  const std::string moe = R"(, "num_local_experts": 8)";
  const ExpertVariant variants[] = {
      {{}, P({{"ep", "sp", "fsdp"}, N, TP}), P({{"ep", "sp", "fsdp"}, TP, N})},
      {{"fsdp_is_ep_bound=false"}, P({{"ep", "sp"}, N, TP}), P({{"ep", "sp"}, TP, N})},
      {{"sp_is_ep_bound=false"}, P({{"ep", "fsdp"}, N, TP}), P({{"ep", "fsdp"}, TP, N})},
      {{"fsdp_is_ep_bound=false", "sp_is_ep_bound=false"}, P({{"ep"}, N, TP}), P({{"ep"}, TP, N})},
      {{"use_expert_tensor_mode=true"}, P({TP, N, N}), P({TP, N, N})},
      {{"use_expert_tensor_mode=true", "fsdp_is_ep_bound=false"}, P({TP, N, N}), P({TP, N, N})},
  };
  for (const ExpertVariant& variant : variants) {
    const Json config = Config(variant.sets, moe);
    const ExpertMesh expert =
        FoldExpertMesh(FiveAxisMesh(1, 2, 2, 1, 2), ParallelAxisNamesOf(config), ExpertBindingOf(config));
    auto specs = GetExpertSpecs(table_, *presets_, config, DimsOf(config).experts, expert);
    ASSERT_TRUE(specs.ok()) << specs.status().ToString();
    ASSERT_TRUE(specs->has_value());
    EXPECT_EQ((*specs)->experts, 8);
    EXPECT_EQ((*specs)->column, variant.column);
    EXPECT_EQ((*specs)->row, variant.row);
    if ((*specs)->expert_tensor_mode) {
      EXPECT_EQ((*specs)->bias, P({TP, N}));
    } else {
      EXPECT_EQ((*specs)->bias, P({variant.column[0], TP}));
    }
  }
}

TEST_F(ActivationsTest, Section52FusedPathOnTheExpertMesh) {
  const Json standard = Config({}, R"(, "num_local_experts": 8)");
  const ExpertMesh expert = FoldExpertMesh(FiveAxisMesh(2, 2, 2, 2, 1), ParallelAxisNames{}, ExpertBinding{});
  auto specs = GetExpertSpecs(table_, *presets_, standard, DimsOf(standard).experts, expert);
  ASSERT_TRUE(specs.ok() && specs->has_value());
  const std::vector<std::pair<std::string, PartitionSpec>> expected = {
      {"hidden_in", P({DP, N, N})},      {"router_probs", P({DP, N})}, {"wi_wu_kernel", P({{"ep"}, N, TP})},
      {"wd_kernel", P({{"ep"}, TP, N})}, {"bias", P({{"ep"}, TP})},    {"output", P({DP, N, TP})},
  };
  EXPECT_EQ((*specs)->fused, expected);
  EXPECT_EQ((*specs)->model_output, P({DP, N, TP}));

  const Json etm = Config({"use_expert_tensor_mode=true"}, R"(, "num_local_experts": 8)");
  auto etm_specs = GetExpertSpecs(table_, *presets_, etm, DimsOf(etm).experts, expert);
  ASSERT_TRUE(etm_specs.ok() && etm_specs->has_value());
  const std::vector<std::pair<std::string, PartitionSpec>> etm_expected = {
      {"hidden_in", P({DP, N, N})}, {"router_probs", P({DP, N})}, {"wi_wu_kernel", P({TP, N, N})},
      {"wd_kernel", P({TP, N, N})}, {"bias", P({TP, N})},         {"output", P({DP, N, N})},
  };
  EXPECT_EQ((*etm_specs)->fused, etm_expected);
  EXPECT_EQ((*etm_specs)->model_output, P({DP, N, N}));
  // Expert-tensor mode with tp = 2 on the expert mesh: EasyDeL raises ValueError.
  const std::vector<Finding> findings = ExpertMeshFindings(expert, *etm_specs);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].code, FindingCode::kExpertMesh);
  EXPECT_EQ(findings[0].message,
            "expert_mesh: use_expert_tensor_mode needs the expert mesh's tp size to be 1, but it is 2 (dp=2, ep=4, "
            "tp=2); EasyDeL raises ValueError");
}

TEST_F(ActivationsTest, Section52FusedSpecsUseRenamedExpertMeshAxes) {
  const Json config = Config({"partition_axis.data_parallel_axis=data", "partition_axis.expert_parallel_axis=expert",
                              "partition_axis.tensor_parallel_axis=model", "partition_axis.sequence_parallel_axis=seq"},
                             R"(, "num_local_experts": 8)");
  Mesh mesh;
  mesh.axis_names = {"data", "fsdp", "expert", "model", "seq"};
  mesh.shape = {1, 2, 2, 2, 1};
  const ExpertMesh expert = FoldExpertMesh(mesh, ParallelAxisNamesOf(config), ExpertBindingOf(config));
  EXPECT_EQ(expert.ToString(), "data=1, expert=4, model=2");
  auto specs = GetExpertSpecs(table_, *presets_, config, DimsOf(config).experts, expert);
  ASSERT_TRUE(specs.ok() && specs->has_value());
  EXPECT_EQ((*specs)->fused[2].second, P({{"expert"}, N, {"model"}}));
  EXPECT_EQ((*specs)->column, P({{"expert", "seq", "fsdp"}, N, {"model"}}));
  EXPECT_EQ((*specs)->model_output, P({{"data"}, N, {"model"}}));
}

TEST_F(ActivationsTest, DenseConfigsHaveNoExpertSpecsAndExpertsMustSplitEvenly) {
  auto dense = GetExpertSpecs(table_, *presets_, Config(), 0, ExpertMesh{});
  ASSERT_TRUE(dense.ok());
  EXPECT_FALSE(dense->has_value());
  const Json config = Config({}, R"(, "num_local_experts": 6)");
  const ExpertMesh expert = FoldExpertMesh(FiveAxisMesh(1, 2, 2, 1, 1), ParallelAxisNames{}, ExpertBinding{});
  auto specs = GetExpertSpecs(table_, *presets_, config, DimsOf(config).experts, expert);
  const std::vector<Finding> findings = ExpertMeshFindings(expert, *specs);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(
      findings[0].message,
      "expert_mesh: 6 experts cannot be dealt to the folded ep axis of size 4 (from ep x fsdp x sp); the fused MoE "
      "shard_map needs an even split");
  EXPECT_EQ(findings[0].notes, (std::vector<std::string>{"valid folded sizes: 1, 2, 3, 6"}));
}

// ---- Which mode and which specs each kernel uses (easydel/operations/kernels/) -------------------------

class KernelTest : public ActivationsTest {
 protected:
  StatusOr<ActivationPlan> BuildKernel(const Json& config, const Mesh& mesh, RuntimeMode mode,
                                       std::optional<int64_t> batch, std::optional<int64_t> seq,
                                       const std::string& kernel, std::optional<int> aux = std::nullopt) {
    ActivationRequest request;
    request.table = &table_;
    request.presets = presets_;
    request.config = &config;
    const schemas::ModelDims dims = DimsOf(config);
    request.dims = &dims;
    request.mesh = mesh;
    request.attention.mode = mode;
    request.attention.softmax_aux_ndim = aux;
    request.batch = batch;
    request.seq = seq;
    request.kernel = kernel;
    return BuildActivationPlan(request);
  }

  // The kernel report of `kernel` on the C1 example: dp2,fsdp2,ep1,tp2,sp2, decode query
  // (8, 1, 32, 128) and cache KV (8, 4096, 8, 128).
  KernelReport Example(const std::string& kernel) {
    auto plan = BuildKernel(Config(kC1), FiveAxisMesh(2, 2, 1, 2, 2), RuntimeMode::kDecode, 8, 4096, kernel);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_TRUE(plan.ok() && plan->kernel.has_value());
    return plan.ok() && plan->kernel ? *plan->kernel : KernelReport();
  }

  static const KernelSpecReport* Spec(const KernelReport& report, const std::string& name) {
    for (const KernelSpecReport& spec : report.specs) {
      if (spec.name == name) return &spec;
    }
    return nullptr;
  }
  static PartitionSpec Applied(const KernelReport& report, const std::string& name) {
    const KernelSpecReport* spec = Spec(report, name);
    EXPECT_NE(spec, nullptr) << name;
    return spec ? spec->applied : PartitionSpec();
  }
};

TEST_F(KernelTest, Section24TableModeTestLayoutAndMni) {
  struct Row {
    std::string kernel, easydel;
    int mode_dim;
    AttnLayout layout;
    bool mni, shard_map, transposed;
  };
  const Row rows[] = {
      {"flash_attn2", "flash_attn2", 1, AttnLayout::kBthd, false, true, false},
      {"paged_flash", "paged_flash_attention", 1, AttnLayout::kBthd, false, true, false},
      {"sdpa", "sdpa", 1, AttnLayout::kBthd, false, true, false},
      {"vanilla", "vanilla", 1, AttnLayout::kBthd, false, false, false},
      {"ring", "ring", 2, AttnLayout::kBthd, true, true, false},
      {"blocksparse", "blocksparse", 2, AttnLayout::kBhtd, true, true, true},
      {"decode", "autoregressive_decodeattn", 1, AttnLayout::kBthd, false, true, false},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.kernel);
    // The EasyDeL name selects the same kernel as easyplan's.
    const KernelReport report = Example(row.easydel);
    EXPECT_EQ(report.name, row.kernel);
    EXPECT_EQ(report.easydel_name, row.easydel);
    EXPECT_EQ(report.selected_by, "--kernel");
    EXPECT_EQ(report.mode_dim, row.mode_dim);
    EXPECT_EQ(report.layout, row.layout);
    EXPECT_EQ(report.qkv_mni, row.mni);
    EXPECT_EQ(report.shard_map, row.shard_map);
    EXPECT_EQ(report.transposed, row.transposed);
    // The query length (1) decides for the dim-1 kernels; ring and blocksparse see the 32 heads.
    EXPECT_EQ(report.tested, row.mode_dim == 1 ? 1 : 32);
    EXPECT_EQ(report.kernel_mode, row.mode_dim == 1 ? RuntimeMode::kDecode : RuntimeMode::kTrain);
  }
}

TEST_F(KernelTest, Section24WorkedExampleUnderC1) {
  // flash_attn2 passes P("dp", None, "tp", None) for query, key and value.
  const KernelReport flash = Example("flash_attn2");
  for (const char* name : {"query", "key", "value", "output"}) {
    EXPECT_EQ(Applied(flash, name), P({DP, N, TP, N})) << name;
    EXPECT_TRUE(Spec(flash, name)->corrected);
  }
  EXPECT_EQ(Spec(flash, "query")->shape, (Shape{8, 1, 32, 128}));
  EXPECT_EQ(Spec(flash, "key")->shape, (Shape{8, 4096, 8, 128}));
  EXPECT_EQ(Applied(flash, "bias"), P({DP, N, N, N}));  // keeps [0, 1]; the bias head entry is None
  EXPECT_EQ(Applied(flash, "cu_seqlens"), P({N}));
  // vanilla applies the full specs, corrected: sp does not divide the query length 1.
  const KernelReport vanilla = Example("vanilla");
  EXPECT_EQ(Applied(vanilla, "query"), P({DP, N, TP, N}));
  EXPECT_EQ(Spec(vanilla, "query")->spec, P({DP, SP, TP, N}));
  EXPECT_EQ(Applied(vanilla, "key"), P({DP, SP, TP, N}));
  EXPECT_EQ(Applied(vanilla, "bias"), P({DP, N, N, N}));  // (8, 32, 1, 4096): sp does not divide 1
  // ring tests the head count (32), so train rules: the batch is B, not "dp".
  const KernelReport ring = Example("ring");
  EXPECT_EQ(Applied(ring, "query"), P({B, N, TP, N}));
  EXPECT_EQ(Applied(ring, "key"), P({B, SP, TP, N}));  // keeps [0, 1, 2]; mni: the query's head axis
  EXPECT_EQ(Spec(ring, "softmax_aux"), nullptr);       // no softmax aux: the kernel passes None
}

TEST_F(KernelTest, Section24SdpaPassesNoTensorSoNothingIsCorrected) {
  // Batch 1 over dp: flash_attn2's correction drops "dp", sdpa keeps it; sdpa passes the whole bias.
  const Json c1 = Config(kC1);
  const Mesh mesh = FiveAxisMesh(2, 2, 1, 2, 2);
  auto flash = BuildKernel(c1, mesh, RuntimeMode::kDecode, 1, 4096, "flash_attn2");
  auto sdpa = BuildKernel(c1, mesh, RuntimeMode::kDecode, 1, 4096, "sdpa");
  ASSERT_TRUE(flash.ok() && sdpa.ok());
  EXPECT_EQ(Applied(*flash->kernel, "query"), P({N, N, TP, N}));
  EXPECT_EQ(Applied(*sdpa->kernel, "query"), P({DP, N, TP, N}));
  EXPECT_FALSE(Spec(*sdpa->kernel, "query")->corrected);
  EXPECT_EQ(Applied(*sdpa->kernel, "bias"), P({DP, N, SP, N}));  // whole and uncorrected
  EXPECT_EQ(Applied(*sdpa->kernel, "cu_seqlens"), P({DP}));      // P(query[0])
  EXPECT_EQ(Applied(*flash->kernel, "cu_seqlens"), P({N}));
}

TEST_F(KernelTest, Section24RingAndBlocksparseSeeDecodeOnlyForOneHead) {
  const Mesh mesh = FiveAxisMesh(2, 2, 1, 2, 2);
  // 32 heads: train rules even for a one-token step, so C1's decode batch "dp" is never applied.
  auto ring = BuildKernel(Config(kC1), mesh, RuntimeMode::kDecode, 8, 4096, "ring", 2);
  ASSERT_TRUE(ring.ok());
  EXPECT_EQ(ring->kernel->kernel_mode, RuntimeMode::kTrain);
  EXPECT_EQ(Applied(*ring->kernel, "softmax_aux"), P({TP}));  // flattened to 1-D: [HEAD]
  // One attention head: dim 2 is 1, so decode rules, even in train mode with a long query.
  const Json one_head = Config(kC1, R"(, "head_dim": 128)");
  Json single = one_head;
  single["num_attention_heads"] = 1;
  single["num_key_value_heads"] = 1;
  auto ring1 = BuildKernel(single, mesh, RuntimeMode::kTrain, 8, 4096, "ring");
  ASSERT_TRUE(ring1.ok()) << ring1.status().ToString();
  EXPECT_EQ(ring1->kernel->tested, 1);
  EXPECT_EQ(ring1->kernel->kernel_mode, RuntimeMode::kDecode);
  EXPECT_EQ(Applied(*ring1->kernel, "query"), P({DP, SP, N, N}));  // (8, 4096, 1, 128): tp does not divide 1
  // blocksparse: bhtd, mni, keeps [0, 1] of the transposed (B, H, T, D) tensors.
  auto blocksparse = BuildKernel(Config(), mesh, RuntimeMode::kTrain, 8, 4096, "blocksparse", 1);
  ASSERT_TRUE(blocksparse.ok());
  EXPECT_EQ(Spec(*blocksparse->kernel, "query")->shape, (Shape{8, 32, 4096, 128}));
  EXPECT_EQ(Applied(*blocksparse->kernel, "query"), P({B, TP, N, N}));
  EXPECT_EQ(Applied(*blocksparse->kernel, "key"), P({B, TP, N, N}));
  EXPECT_EQ(Applied(*blocksparse->kernel, "softmax_aux"), P({TP}));
}

TEST_F(KernelTest, Section24DecodeKernelSpecsAndItsValueErrorOutsideDecode) {
  const KernelReport decode = Example("decode");
  EXPECT_EQ(Spec(decode, "query3d")->shape, (Shape{8, 32, 128}));
  EXPECT_EQ(Applied(decode, "query3d"), P({DP, TP, N}));
  EXPECT_EQ(Applied(decode, "key"), P({DP, N, TP, N}));
  EXPECT_EQ(Applied(decode, "value"), P({DP, N, TP, N}));
  EXPECT_EQ(Applied(decode, "starts"), P({DP}));
  EXPECT_EQ(Applied(decode, "indexs"), P({DP}));
  EXPECT_EQ(Applied(decode, "output"), P({DP, TP, N}));
  for (RuntimeMode mode : {RuntimeMode::kTrain, RuntimeMode::kPrefill, RuntimeMode::kInsert}) {
    auto plan = BuildKernel(Config(kC1), FiveAxisMesh(2, 2, 1, 2, 2), mode, 8, 4096, "decode");
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().kind(), ErrorKind::kBadInput);
    EXPECT_NE(plan.status().ToString().find("ValueError(\"AutoRegressiveDecodeAttn requires decode mode\")"),
              std::string::npos)
        << plan.status().ToString();
  }
  // A one-token query is decode for the kernel whatever the model's mode.
  EXPECT_TRUE(BuildKernel(Config(kC1), FiveAxisMesh(2, 2, 1, 2, 2), RuntimeMode::kPrefill, 8, 1, "decode").ok());
}

TEST_F(KernelTest, Section24PagedFlashQueryOutputAndBias) {
  const KernelReport paged = Example("paged_flash");
  EXPECT_EQ(Applied(paged, "query"), P({DP, N, TP, N}));
  EXPECT_EQ(Applied(paged, "output"), P({DP, N, TP, N}));
  EXPECT_EQ(Applied(paged, "bias"), P({DP, N, N, N}));
  EXPECT_EQ(Spec(paged, "key"), nullptr);
}

TEST_F(KernelTest, WithoutShapesTheSpecsAreReportedUncorrected) {
  auto plan = BuildKernel(Config(kC1), FiveAxisMesh(2, 2, 1, 2, 2), RuntimeMode::kDecode, std::nullopt, std::nullopt,
                          "flash_attn2");
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->kernel->tested, 1);  // decode: the query length is 1
  EXPECT_EQ(Applied(*plan->kernel, "query"), P({DP, N, TP, N}));
  EXPECT_FALSE(Spec(*plan->kernel, "query")->shape.has_value());
  auto train =
      BuildKernel(Config(), FiveAxisMesh(2, 2, 1, 2, 2), RuntimeMode::kTrain, std::nullopt, std::nullopt, "vanilla");
  ASSERT_TRUE(train.ok());
  EXPECT_FALSE(train->kernel->tested.has_value());  // more than 1: train rules
  EXPECT_EQ(train->kernel->kernel_mode, RuntimeMode::kTrain);
}

TEST_F(KernelTest, TheConfigSelectsTheKernelByMode) {
  const Json config = Config({"attn_mechanism=flash_attn2", "decode_attn_mechanism=autoregressive_decodeattn"});
  const Mesh mesh = FiveAxisMesh(1, 1, 1, 2, 1);
  struct Row {
    RuntimeMode mode;
    std::string kernel, selected_by;
  };
  // FlexibleAttentionModule uses impl_decode only for MODE_DECODE: insert runs attn_mechanism.
  for (const Row& row : {Row{RuntimeMode::kTrain, "flash_attn2", "attn_mechanism"},
                         Row{RuntimeMode::kPrefill, "flash_attn2", "attn_mechanism"},
                         Row{RuntimeMode::kDecode, "decode", "decode_attn_mechanism"},
                         Row{RuntimeMode::kInsert, "flash_attn2", "attn_mechanism"}}) {
    auto plan = BuildKernel(config, mesh, row.mode, std::nullopt, std::nullopt, "");
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    ASSERT_TRUE(plan->kernel.has_value());
    EXPECT_EQ(plan->kernel->name, row.kernel);
    EXPECT_EQ(plan->kernel->selected_by, row.selected_by);
  }
  // The default attn_mechanism is vanilla; decode without decode_attn_mechanism uses it too.
  auto plain = BuildKernel(Config(), mesh, RuntimeMode::kDecode, std::nullopt, std::nullopt, "");
  ASSERT_TRUE(plain.ok() && plain->kernel);
  EXPECT_EQ(plain->kernel->name, "vanilla");
  EXPECT_EQ(plain->kernel->selected_by, "attn_mechanism");
  // auto is chosen at run time from the platform; other kernels are not modelled: a note, no report.
  for (const char* mechanism : {"auto", "cudnn", "ragged_page_attention_v3"}) {
    auto plan = BuildKernel(Config({std::string("attn_mechanism=") + mechanism}), mesh, RuntimeMode::kTrain,
                            std::nullopt, std::nullopt, "");
    ASSERT_TRUE(plan.ok()) << mechanism;
    EXPECT_FALSE(plan->kernel.has_value());
    EXPECT_NE(plan->kernel_note.find(mechanism), std::string::npos) << plan->kernel_note;
  }
  // A config whose attn_mechanism is decode-only still plans a training step (memory, validate and export
  // build one): the kernel section is empty and says why. An explicit --kernel decode stays an error.
  auto decode_only =
      BuildKernel(Config({"attn_mechanism=autoregressive_decodeattn"}), mesh, RuntimeMode::kTrain, 8, 4096, "");
  ASSERT_TRUE(decode_only.ok()) << decode_only.status().ToString();
  EXPECT_FALSE(decode_only->kernel.has_value());
  EXPECT_NE(decode_only->kernel_note.find("attn_mechanism is autoregressive_decodeattn"), std::string::npos)
      << decode_only->kernel_note;
  EXPECT_NE(decode_only->kernel_note.find("runs only in decode"), std::string::npos) << decode_only->kernel_note;
  EXPECT_FALSE(decode_only->residual.empty());
  EXPECT_FALSE(BuildKernel(Config(), mesh, RuntimeMode::kTrain, 8, 4096, "decode").ok());
  auto unknown = BuildKernel(Config(), mesh, RuntimeMode::kTrain, std::nullopt, std::nullopt, "splash");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().ToString().find("--kernel 'splash'"), std::string::npos);
}

// ---- The RaggedPagesCache (easydel/caching/ragged_page/cache.py) -------------------------------------

class RaggedTest : public KernelTest {
 protected:
  StatusOr<ActivationPlan> BuildRagged(const Json& config, const Mesh& mesh, int version, int64_t num_pages = 1024,
                                       int64_t page_size = 128) {
    ActivationRequest request;
    request.table = &table_;
    request.presets = presets_;
    request.config = &config;
    const schemas::ModelDims dims = DimsOf(config);
    request.dims = &dims;
    request.mesh = mesh;
    request.attention.mode = RuntimeMode::kDecode;
    request.ragged = RaggedCacheOptions{version, page_size, num_pages};
    return BuildActivationPlan(request);
  }
};

TEST_F(RaggedTest, Section43ExampleTable) {
  struct Row {
    int64_t kv_heads, head_dim;
    int version;
    Shape shape;
    PartitionSpec spec;
    DType dtype;
  };
  const Row rows[] = {
      {8, 128, 3, Shape{1024, 128, 8, 2, 128}, P({DP, N, TP, N, N}), DType::kBFloat16},
      {2, 128, 3, Shape{1024, 128, 4, 1, 128}, P({DP, N, TP, N, N}), DType::kFloat32},  // upcast to f32
      {1, 64, 3, Shape{1024, 128, 1, 2, 128}, P({DP, N, N, N, N}), DType::kBFloat16},   // replicated heads
      {8, 128, 2, Shape{1024, 128, 16, 128}, P({DP, N, TP, N}), DType::kBFloat16},
  };
  const Mesh mesh = FiveAxisMesh(2, 1, 1, 4, 1);
  for (const Row& row : rows) {
    SCOPED_TRACE(fmt::format("kvh {} head_dim {} v{}", row.kv_heads, row.head_dim, row.version));
    const Json config = Config({"kvdtype=bfloat16", fmt::format("num_key_value_heads={}", row.kv_heads)},
                               fmt::format(R"(, "head_dim": {})", row.head_dim));
    auto plan = BuildRagged(config, mesh, row.version);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    ASSERT_TRUE(plan->ragged.has_value());
    const RaggedCacheReport& ragged = *plan->ragged;
    EXPECT_EQ(ragged.pages.shape, row.shape);
    EXPECT_EQ(ragged.pages.effective, row.spec);
    EXPECT_EQ(ragged.pages.spec, row.spec);
    EXPECT_EQ(ragged.dtype, row.dtype);
    EXPECT_EQ(ragged.requested_dtype, DType::kBFloat16);
    EXPECT_EQ(ragged.upcast, row.dtype != DType::kBFloat16);
    EXPECT_EQ(ragged.dp_size, 2);
    EXPECT_EQ(ragged.kv_head_axis_size, 4);
    EXPECT_EQ(ragged.kv_head_shards, row.spec[2].empty() ? 1 : 4);
    EXPECT_EQ(ragged.heads_replicated, row.spec[2].empty());
    EXPECT_EQ(ragged.pages.layers, 4);
    // Bytes: the whole tensor over dp x (tp when the heads shard).
    const int64_t bytes = *row.shape.NumElements() * (DTypeBits(row.dtype) / 8);
    EXPECT_EQ(ragged.pages.bytes, bytes);
    EXPECT_EQ(ragged.pages.bytes_per_device, bytes / (row.spec[2].empty() ? 2 : 8));
    EXPECT_EQ(ragged.bytes, 4 * bytes);
    EXPECT_EQ(plan->cache_bytes, ragged.bytes);
    // The kernel: token-major query over the heads; new K/V over KV_HEAD unless the heads replicate.
    EXPECT_EQ(ragged.query, P({N, TP, N}));
    EXPECT_EQ(ragged.kv, row.spec[2].empty() ? P({N, N, N}) : P({N, TP, N}));
    EXPECT_EQ(ragged.sinks, P({TP}));
  }
}

TEST_F(RaggedTest, V3Geometry) {
  // packing = 32 / bits; combined = align(kvh, packing) for head_dim 64, else align(2 kvh, packing).
  const Mesh mesh = FiveAxisMesh(1, 1, 1, 1, 1);
  auto plan = BuildRagged(
      Config({"kvdtype=float8_e4m3fn", "num_attention_heads=24", "num_key_value_heads=3"}, R"(, "head_dim": 200)"),
      mesh, 3, 16, 32);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->ragged->packing, 4);
  EXPECT_EQ(plan->ragged->combined_heads, 8);  // align(6, 4)
  EXPECT_EQ(plan->ragged->groups, 2);
  EXPECT_EQ(plan->ragged->head_dim_pad, 256);
  EXPECT_EQ(plan->ragged->pages.shape, (Shape{16, 32, 2, 4, 256}));
  // dp = 1: no page axis; no shards: no head-group axis.
  EXPECT_EQ(plan->ragged->pages.spec, P({N, N, N, N, N}));
  // float64 does not pack into 32-bit words.
  auto wide = BuildRagged(Config({"kvdtype=float64"}), mesh, 3);
  ASSERT_FALSE(wide.ok());
  EXPECT_NE(wide.status().ToString().find("wider than 32 bits"), std::string::npos);
}

TEST_F(RaggedTest, ShardCountFromKvHeadAxisSpecFromHeadAxis) {
  // kv_head_axis on sp (4) decides the shard count; the spec still names head_axis ("tp").
  const Mesh mesh = FiveAxisMesh(1, 1, 1, 2, 4);
  auto plan = BuildRagged(Config({"kvdtype=bfloat16", "partition_axis.kv_head_axis=sp"}), mesh, 3);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->ragged->kv_head_axis_size, 4);
  EXPECT_EQ(plan->ragged->kv_head_shards, 4);
  EXPECT_EQ(plan->ragged->pages.spec, P({N, N, TP, N, N}));
  // kv_head_axis null: one shard, the heads are replicated and the K/V spec is None.
  auto none = BuildRagged(Config({"kvdtype=bfloat16", "partition_axis.kv_head_axis=null"}), mesh, 2);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->ragged->kv_head_shards, 1);
  EXPECT_FALSE(none->ragged->heads_replicated);
  EXPECT_EQ(none->ragged->pages.spec, P({N, N, N, N}));
  EXPECT_EQ(none->ragged->kv, P({N, N, N}));
}

TEST_F(RaggedTest, V2ReplicatesWhenTwiceTheKvHeadsDoNotSplit) {
  auto plan = BuildRagged(
      Config({"kvdtype=bfloat16", "num_attention_heads=24", "num_key_value_heads=3"}, R"(, "head_dim": 128)"),
      FiveAxisMesh(2, 1, 1, 4, 1), 2);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->ragged->pages.shape, (Shape{1024, 128, 6, 128}));
  EXPECT_TRUE(plan->ragged->heads_replicated);
  EXPECT_EQ(plan->ragged->pages.spec, P({DP, N, N, N}));
  EXPECT_EQ(plan->ragged->dtype, DType::kBFloat16);  // v2 never upcasts
}

TEST_F(RaggedTest, InputsEasyDeLComputesAtRunTime) {
  const Mesh mesh = FiveAxisMesh(2, 1, 1, 4, 1);
  auto missing = BuildRagged(Config({"kvdtype=bfloat16"}), mesh, 3, 0);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().ToString().find("free HBM"), std::string::npos);
  auto odd = BuildRagged(Config({"kvdtype=bfloat16"}), mesh, 3, 1023);
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().ToString().find("not a multiple of the data-parallel size 2"), std::string::npos);
  // With shapes, kv_pages replaces the TransformerCache rows and no cache-reshard finding is made.
  ActivationRequest request;
  const Json config = Config({"kvdtype=bfloat16", "partition_axis.decode_batch_axis=dp"});
  request.table = &table_;
  request.presets = presets_;
  request.config = &config;
  const schemas::ModelDims dims = DimsOf(config);
  request.dims = &dims;
  request.mesh = FiveAxisMesh(2, 2, 1, 2, 1);
  request.attention.mode = RuntimeMode::kDecode;
  request.batch = 8;
  request.seq = 4096;
  request.ragged = RaggedCacheOptions{3, 128, 1024};
  auto plan = BuildActivationPlan(request);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->tensors.back().name, "ragged_cache.kv_pages");
  for (const ActivationTensor& tensor : plan->tensors)
    EXPECT_FALSE(tensor.name.starts_with("kv_cache.")) << tensor.name;
  EXPECT_EQ(FindCode(*plan, FindingCode::kCacheReshard), nullptr);
}

}  // namespace
}  // namespace easyplan::planner
