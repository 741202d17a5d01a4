// The tiny models `check` derives from the family data (schemas/families/*.yaml numeric_check), pinned
// for each family with a forward pass, and the description the forward pass gets from the tiny config.
#include "kernels/tiny_model.h"

#include <gtest/gtest.h>

#include <set>

#include "core/document.h"
#include "core/json_parse.h"
#include "core/yaml_parse.h"
#include "planner/spec_test_util.h"
#include "schemas/data_source.h"
#include "schemas/resolver.h"
#include "schemas/schema_set.h"
#include "tests/test_util.h"

namespace easyplan::kernels {
namespace {

using planner::plan_testing::FiveAxisMesh;

class TinyModelTest : public ::testing::Test {
 protected:
  TinyModelTest() : schemas_(schemas::DataSource::Embedded()) {}

  schemas::ResolvedConfig Resolve(const std::string& example, const std::vector<std::string>& sets = {}) {
    const std::string path = testing::SourceDir() + "/examples/" + example + "/config.json";
    auto doc = ParseJsonDocument(testing::ReadTestFile(path), "config.json");
    EXPECT_TRUE(doc.ok());
    schemas::ConfigInput input{std::move(*doc), std::nullopt, sets};
    auto resolved = schemas::ResolveConfig(input, schemas::ResolveOptions{}, schemas_);
    EXPECT_TRUE(resolved.ok()) << resolved.status().ToString();
    return resolved.ok() ? *resolved : schemas::ResolvedConfig();
  }

  StatusOr<TinyModel> Derive(const std::string& example, const Mesh& mesh,
                             planner::UnevenMode uneven = planner::UnevenMode::kReplicate,
                             const std::vector<std::string>& sets = {}) {
    const schemas::ResolvedConfig full = Resolve(example, sets);
    EP_ASSIGN_OR_RETURN(const schemas::NumericCheckDecl* decl,
                        schemas_.NumericCheck(full.config.value("model_type", std::string())));
    EXPECT_NE(decl, nullptr);
    if (decl == nullptr) return Status::Internal("no numeric_check");
    EP_ASSIGN_OR_RETURN(schemas::NumericCheckSpec spec, schemas::NumericCheckFor(*decl, full.config));
    EP_ASSIGN_OR_RETURN(schemas::ModelDims dims, schemas::ModelDimsOf(full));
    return DeriveTinyModel(spec, dims, mesh, uneven);
  }

  std::vector<std::string> Sets(const std::string& example, const Mesh& mesh,
                                planner::UnevenMode uneven = planner::UnevenMode::kReplicate,
                                const std::vector<std::string>& sets = {}) {
    auto tiny = Derive(example, mesh, uneven, sets);
    EXPECT_TRUE(tiny.ok()) << tiny.status().ToString();
    if (!tiny.ok()) return {};
    EXPECT_EQ(SetStrings(tiny->overrides), tiny->sets);  // the overrides and their strings agree
    return tiny->sets;
  }

  schemas::SchemaSet schemas_;
};

using Strings = std::vector<std::string>;

TEST_F(TinyModelTest, LlamaKeepsTheGqaRatioWithTwoKvGroupsPerHeadUnit) {
  EXPECT_EQ(Sets("llama-3.1-8b", FiveAxisMesh(1, 2, 1, 2, 1)),
            (Strings{"num_hidden_layers=2", "hidden_size=64", "intermediate_size=128", "vocab_size=128",
                     "num_key_value_heads=2", "num_attention_heads=8", "head_dim=8"}));
  // Three devices: sizes become multiples of 3; the vocabulary (128256 = 3 x 42752) stays divisible.
  EXPECT_EQ(Sets("llama-3.1-8b", FiveAxisMesh(1, 1, 1, 3, 1)),
            (Strings{"num_hidden_layers=2", "hidden_size=66", "intermediate_size=132", "vocab_size=129",
                     "num_key_value_heads=3", "num_attention_heads=12", "head_dim=8"}));
  // A vocabulary the mesh does not divide stays indivisible under --uneven replicate only.
  EXPECT_EQ(
      Sets("llama-3.1-8b", FiveAxisMesh(1, 1, 1, 3, 1), planner::UnevenMode::kReplicate, {"vocab_size=128257"})[3],
      "vocab_size=130");
  EXPECT_EQ(Sets("llama-3.1-8b", FiveAxisMesh(1, 1, 1, 3, 1), planner::UnevenMode::kError, {"vocab_size=128257"})[3],
            "vocab_size=129");
  // One kv head: one group per head unit (here the tp size, 2), with the GQA ratio kept (32 heads).
  const Strings mqa =
      Sets("llama-3.1-8b", FiveAxisMesh(1, 2, 1, 2, 1), planner::UnevenMode::kReplicate, {"num_key_value_heads=1"});
  EXPECT_EQ(mqa[4], "num_key_value_heads=2");
  EXPECT_EQ(mqa[5], "num_attention_heads=64");
}

TEST_F(TinyModelTest, Qwen2ClearsLayerTypesAndMaxWindowLayers) {
  EXPECT_EQ(
      Sets("qwen2.5-7b", FiveAxisMesh(1, 4, 1, 2, 1)),
      (Strings{"num_hidden_layers=2", "hidden_size=64", "intermediate_size=128", "vocab_size=128", "layer_types=null",
               "max_window_layers=2", "num_key_value_heads=2", "num_attention_heads=14", "head_dim=8"}));
}

TEST_F(TinyModelTest, MoeFamiliesSetEveryExpertCountKeyTheyHave) {
  auto mixtral = Derive("mixtral-8x7b", FiveAxisMesh(2, 2, 2, 2, 1));
  ASSERT_TRUE(mixtral.ok()) << mixtral.status().ToString();
  EXPECT_EQ(mixtral->structure.name, "mixtral");
  EXPECT_EQ(mixtral->structure.moe.gate, "experts/w1");
  EXPECT_EQ(mixtral->structure.moe.norm_topk_prob, std::optional<bool>(true));
  EXPECT_EQ(mixtral->sets, (Strings{"num_hidden_layers=2", "hidden_size=64", "intermediate_size=128", "vocab_size=128",
                                    "num_key_value_heads=2", "num_attention_heads=8", "head_dim=8",
                                    "num_local_experts=16", "num_experts=16"}));
  EXPECT_EQ(Sets("qwen3-30b-a3b", FiveAxisMesh(1, 4, 1, 2, 1)),
            (Strings{"num_hidden_layers=2", "hidden_size=64", "intermediate_size=128", "vocab_size=128",
                     "max_window_layers=2", "num_key_value_heads=2", "num_attention_heads=16", "head_dim=8",
                     "num_local_experts=16", "num_experts=16", "moe_intermediate_size=32", "decoder_sparse_step=1",
                     "mlp_only_layers=[]"}));
}

TEST_F(TinyModelTest, DeepseekKeepsMlaGroupsAndOneDenseLayer) {
  EXPECT_EQ(
      Sets("deepseek-v3", FiveAxisMesh(2, 2, 2, 2, 1)),
      (Strings{"num_hidden_layers=2", "hidden_size=64", "intermediate_size=128", "vocab_size=128",
               "num_attention_heads=4", "num_key_value_heads=4", "n_routed_experts=32", "moe_intermediate_size=32",
               "first_k_dense_replace=1", "q_lora_rank=32", "kv_lora_rank=32", "qk_nope_head_dim=8",
               "qk_rope_head_dim=8", "v_head_dim=8", "head_dim=8", "rope_scaling=null", "num_nextn_predict_layers=0"}));
  // No query compression stays none; 3 groups: whole groups on every device (lcm(8, 3) = 24).
  const Strings sets = Sets("deepseek-v3", FiveAxisMesh(2, 2, 2, 2, 1), planner::UnevenMode::kReplicate,
                            {"q_lora_rank=null", "n_group=3", "topk_group=1", "first_k_dense_replace=0"});
  EXPECT_EQ(sets[6], "n_routed_experts=48");
  EXPECT_EQ(sets[8], "first_k_dense_replace=0");
  EXPECT_EQ(sets[9], "kv_lora_rank=32");
}

TEST_F(TinyModelTest, Gpt2SizesItsOwnKeys) {
  EXPECT_EQ(Sets("gpt2", FiveAxisMesh(1, 1, 1, 3, 1)),
            (Strings{"n_layer=2", "n_head=6", "n_embd=48", "n_inner=null", "vocab_size=130", "n_positions=32"}));
}

TEST_F(TinyModelTest, EveryDeclaredFamilyDerivesOnAnyMesh) {
  for (const std::string& name : schemas_.FamilyNames()) {
    auto decl = schemas_.NumericCheck(name);
    ASSERT_TRUE(decl.ok()) << decl.status().ToString();
    if (*decl == nullptr || !(*decl)->missing.empty()) continue;
    SCOPED_TRACE(name);
    auto spec = schemas::NumericCheckFor(**decl, Json::object());
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    auto tiny =
        DeriveTinyModel(*spec, schemas::ModelDims(), FiveAxisMesh(1, 8, 1, 3, 1), planner::UnevenMode::kReplicate);
    ASSERT_TRUE(tiny.ok()) << tiny.status().ToString();
    EXPECT_FALSE(tiny->sets.empty());
  }
}

TEST_F(TinyModelTest, UnknownSizeNamesPointAtTheFamilyFile) {
  schemas::NumericCheckSpec spec;
  spec.forward = "llama";
  spec.tiny.push_back(
      schemas::TinySetting{"hidden_size", std::nullopt, "hiden", {"schemas/families/x.yaml", "", 9, 7}});
  auto size = DeriveTinyModel(spec, schemas::ModelDims(), FiveAxisMesh(1, 1, 1, 1, 1), planner::UnevenMode::kReplicate);
  ASSERT_FALSE(size.ok());
  EXPECT_EQ(size.status().diag().loc.ToString(), "schemas/families/x.yaml:9:7");
  EXPECT_EQ(size.status().diag().message,
            "numeric_check: 'hidden_size' names the tiny size 'hiden', which is not one of kernels/tiny_model.h "
            "(did you mean 'hidden'?)");
}

TEST_F(TinyModelTest, ModelDescOfTheResolvedTinyDeepseek) {
  auto tiny = Derive("deepseek-v3", FiveAxisMesh(2, 2, 2, 2, 1));
  ASSERT_TRUE(tiny.ok());
  const schemas::ResolvedConfig resolved = Resolve("deepseek-v3", tiny->sets);
  auto dims = schemas::ModelDimsOf(resolved);
  ASSERT_TRUE(dims.ok());
  ParamTree tree;
  tree.tensors.push_back(TensorEntry{"model/layers/1/mlp/gate/e_score_correction_bias", Shape{32}});
  planner::Plan plan;
  plan.mesh = FiveAxisMesh(2, 2, 2, 2, 1);
  const ModelDesc m = ModelDescOf(*tiny, *dims, tree, plan);
  EXPECT_EQ(m.forward.name, "deepseek");
  EXPECT_EQ(m.model_type, "deepseek_v3");
  EXPECT_EQ(m.hidden, 64);
  EXPECT_EQ(m.heads, 4);
  EXPECT_EQ(m.experts, 32);
  EXPECT_EQ(m.top_k, 8);
  EXPECT_EQ(m.shared_intermediate, 32);  // one shared expert of moe_intermediate_size
  EXPECT_EQ(m.first_dense_layers, 1);
  EXPECT_EQ(m.n_group, 8);
  EXPECT_EQ(m.topk_group, 4);
  EXPECT_DOUBLE_EQ(m.routed_scaling, 2.5);
  EXPECT_TRUE(m.score_bias);
  EXPECT_EQ(m.sparse_layers, (std::vector<bool>{false, true}));  // after first_k_dense_replace
  EXPECT_EQ(m.q_lora_rank, 32);
  EXPECT_EQ(m.qk_nope_head_dim + m.qk_rope_head_dim, 16);
  EXPECT_TRUE(m.norm_topk_prob);
  EXPECT_FALSE(m.attention_bias);
  // The batch is the batch axes' size (fsdp x dp = 4), the sequence 8 rounded up to sp.
  EXPECT_EQ(m.batch, 4);
  EXPECT_EQ(m.seq, 8);
  EXPECT_EQ(m.bytes_per_element, 2);
}

TEST_F(TinyModelTest, MixtralRenormalisesWhateverItsConfigSays) {
  auto tiny = Derive("mixtral-8x7b", FiveAxisMesh(1, 2, 1, 2, 1));
  ASSERT_TRUE(tiny.ok());
  auto dims = schemas::ModelDimsOf(Resolve("mixtral-8x7b", tiny->sets));
  ASSERT_TRUE(dims.ok());
  EXPECT_FALSE(dims->norm_topk_prob);
  const ModelDesc m = ModelDescOf(*tiny, *dims, ParamTree(), planner::Plan());
  EXPECT_TRUE(m.norm_topk_prob);
  EXPECT_EQ(m.forward.moe.block, "block_sparse_moe");
  EXPECT_EQ(m.shared_intermediate, 0);
  EXPECT_EQ(tiny->top_k_key, "num_experts_per_tok");
  EXPECT_EQ(ReferenceTrainingOverrides(m, tiny->top_k_key),
            Json::parse(R"({"gradient_checkpointing": "nothing_saveable", "attn_mechanism": "vanilla",
                            "num_experts_per_tok": 4})"));
  EXPECT_EQ(
      SetStrings(ReferenceTrainingOverrides(m, tiny->top_k_key)),
      (Strings{"gradient_checkpointing=\"nothing_saveable\"", "attn_mechanism=\"vanilla\"", "num_experts_per_tok=4"}));
}

// A family whose config keeps the top-k elsewhere names that key: "every expert on every token" must
// reach the number the geometry reads (DBRX's ffn_config.moe_top_k; a top-level num_experts_per_tok
// would be an unknown attribute there, and the prediction kept top-4).
TEST_F(TinyModelTest, EveryExpertOverrideReachesTheKeyTheFamilyReadsTopKFrom) {
  for (const auto& [example, key] : std::vector<std::pair<std::string, std::string>>{
           {"dbrx-instruct", "ffn_config.moe_top_k"}, {"llama-4-scout", "text_config.num_experts_per_tok"}}) {
    auto tiny = Derive(example, FiveAxisMesh(1, 2, 1, 2, 1));
    ASSERT_TRUE(tiny.ok()) << example << ": " << tiny.status().ToString();
    EXPECT_EQ(tiny->top_k_key, key) << example;
    auto dims = schemas::ModelDimsOf(Resolve(example, tiny->sets));
    ASSERT_TRUE(dims.ok()) << example;
    ASSERT_LT(dims->top_k, dims->experts) << example;
    ModelDesc m;
    m.experts = dims->experts;
    std::vector<std::string> sets = tiny->sets;
    for (std::string& set : SetStrings(ReferenceTrainingOverrides(m, tiny->top_k_key))) sets.push_back(set);
    auto every = schemas::ModelDimsOf(Resolve(example, sets));
    ASSERT_TRUE(every.ok()) << example;
    EXPECT_EQ(every->top_k, dims->experts) << example;
  }
}

TEST_F(TinyModelTest, EveryTextFamilyDeclaresAForwardStructure) {
  // Every text family has one (docs/SCHEMAS.md, "Forward structures"; a family without would name the trait
  // it lacks in its `missing:`); the vision towers have no text forward.
  const std::set<std::string> without = {"pixtral", "siglip_vision_model", "llama4_vision_model"};
  Strings missing, unexpected;
  for (const std::string& name : schemas_.FamilyNames()) {
    auto decl = schemas_.NumericCheck(name);
    ASSERT_TRUE(decl.ok()) << name << ": " << decl.status().ToString();
    const bool declared = *decl != nullptr && (*decl)->missing.empty();
    if (*decl != nullptr && !(*decl)->missing.empty()) {
      EXPECT_NE((*decl)->missing.find("trait: "), std::string::npos) << name;
    }
    if (!declared && !without.contains(name)) missing.push_back(name);
    if (declared && without.contains(name)) unexpected.push_back(name);
  }
  EXPECT_EQ(missing, Strings{});
  EXPECT_EQ(unexpected, Strings{});
}

}  // namespace
}  // namespace easyplan::kernels
