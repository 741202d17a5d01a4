// The numeric check of the families whose layers live in their own files (kernels/model_<family>.cc) and of
// GLM-4.5 (DeepSeek's MoE forward pass with GQA attention): each bundled example's tiny model, derived
// from its family's numeric_check block as `easyplan check --level numeric` derives it, planned with the
// built-in rules on several meshes, agrees sharded and unsharded; a dropped all-reduce is caught.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/json_parse.h"
#include "kernels/numeric_check.h"
#include "kernels/tiny_model.h"
#include "planner/spec_test_util.h"
#include "rules/rule_library.h"
#include "schemas/data_source.h"
#include "schemas/model_dims.h"
#include "schemas/resolver.h"
#include "schemas/schema_set.h"
#include "schemas/tree_builder.h"
#include "tests/test_util.h"

namespace easyplan::kernels {
namespace {

// EasyDeL's five axes with dp = sp = 1.
Mesh FsdpEpTpMesh(int64_t fsdp, int64_t ep, int64_t tp) {
  return planner::plan_testing::FiveAxisMesh(1, fsdp, ep, tp, 1);
}

class FamilyNumericCheckTest : public ::testing::Test {
 protected:
  FamilyNumericCheckTest() : schemas_(schemas::DataSource::Embedded()), rules_(schemas::DataSource::Embedded()) {}

  // examples/EXAMPLE/config.json; "EXAMPLE:text_config" is its text_config alone (Llama 4's text tower).
  schemas::ResolvedConfig Resolve(const std::string& example, const std::vector<std::string>& sets) {
    const size_t colon = example.find(':');
    const std::string path = testing::SourceDir() + "/examples/" + example.substr(0, colon) + "/config.json";
    std::string text = testing::ReadTestFile(path);
    if (colon != std::string::npos) text = Json::parse(text)[example.substr(colon + 1)].dump();
    auto doc = ParseJsonDocument(text, "config.json");
    EXPECT_TRUE(doc.ok());
    schemas::ConfigInput input{std::move(*doc), std::nullopt, sets};
    auto resolved = schemas::ResolveConfig(input, schemas::ResolveOptions{}, schemas_);
    EXPECT_TRUE(resolved.ok()) << resolved.status().ToString();
    return resolved.ok() ? *resolved : schemas::ResolvedConfig();
  }

  // What `check --level numeric` does: derive the tiny config, build its EasyDeL tree, plan it on `mesh`
  // with the family's built-in rules, and run the forward pass sharded and unsharded.
  NumericReport Check(const std::string& example, const Mesh& mesh, Injection injection = Injection::kNone) {
    const schemas::ResolvedConfig full = Resolve(example, {});
    const std::string model_type = full.config.value("model_type", std::string());
    auto decl = schemas_.NumericCheck(model_type);
    EXPECT_TRUE(decl.ok() && *decl != nullptr) << model_type;
    if (!decl.ok() || *decl == nullptr) return {};
    auto spec = schemas::NumericCheckFor(**decl, full.config);
    auto full_dims = schemas::ModelDimsOf(full);
    EXPECT_TRUE(spec.ok() && full_dims.ok());
    auto tiny = DeriveTinyModel(*spec, *full_dims, mesh, planner::UnevenMode::kReplicate);
    EXPECT_TRUE(tiny.ok()) << tiny.status().ToString();
    if (!tiny.ok()) return {};
    const schemas::ResolvedConfig resolved = Resolve(example, tiny->sets);
    auto tree_template = schemas_.Tree(model_type);
    EXPECT_TRUE(tree_template.ok());
    auto tree = schemas::BuildParamTree(**tree_template, resolved.config, schemas::TreeOptions{});
    EXPECT_TRUE(tree.ok()) << tree.status().ToString();
    auto rules = rules_.ForModelType(model_type);
    auto presets = rules_.GetPresets();
    EXPECT_TRUE(rules.ok() && presets.ok());
    if (!tree.ok() || !rules.ok() || !presets.ok()) return {};
    planner::PlanRequest request;
    request.tree = &*tree;
    request.rules = *rules;
    request.presets = *presets;
    request.config = &resolved.config;
    request.mesh = mesh;
    auto plan = planner::BuildPlan(request);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    if (!plan.ok()) return {};
    auto dims = schemas::ModelDimsOf(resolved);
    EXPECT_TRUE(dims.ok());
    model_ = ModelDescOf(*tiny, *dims, *tree, *plan);
    auto report = RunNumericCheck(model_, *plan, *tree, NumericOptions{.seed = 3, .injection = injection});
    EXPECT_TRUE(report.ok()) << report.status().ToString();
    return report.ok() ? std::move(*report) : NumericReport();
  }

  void ExpectAgreement(const std::string& example, const std::vector<Mesh>& meshes) {
    for (const Mesh& mesh : meshes) {
      const NumericReport r = Check(example, mesh);
      EXPECT_TRUE(r.ok()) << example << " " << mesh.ToString();
      EXPECT_TRUE(r.executed);
      EXPECT_GT(r.comm.records.size(), 0u) << example << " " << mesh.ToString();
      ASSERT_GE(r.comparisons.size(), 4u);  // embed, 2 layers, logits
      EXPECT_EQ(r.comparisons.back().name, "logits");
      for (const Comparison& c : r.comparisons) {
        EXPECT_TRUE(c.ok) << example << " " << mesh.ToString() << " " << c.name << " nmse " << c.nmse;
        EXPECT_LE(c.nmse, 1e-26) << example << " " << mesh.ToString() << " " << c.name;
      }
    }
  }

  void ExpectDroppedAllReduceCaught(const std::string& example, const Mesh& mesh) {
    const NumericReport r = Check(example, mesh, Injection::kDropAllReduce);
    EXPECT_EQ(r.comm.dropped_all_reduces, 1) << example;
    EXPECT_FALSE(r.ok()) << example;
    EXPECT_TRUE(std::any_of(r.comparisons.begin(), r.comparisons.end(), [](const Comparison& c) { return !c.ok; }))
        << example;
  }

  schemas::SchemaSet schemas_;
  rules::RuleLibrary rules_;
  ModelDesc model_;  ///< the last Check's tiny model
};

TEST_F(FamilyNumericCheckTest, Glm4MoeAgreesOnTpFsdpAndEp) {
  ExpectAgreement("glm-4.5-air",
                  {FsdpEpTpMesh(1, 1, 2), FsdpEpTpMesh(2, 1, 2), FsdpEpTpMesh(1, 2, 1), FsdpEpTpMesh(2, 2, 2)});
  EXPECT_EQ(model_.forward.name, "deepseek");
  EXPECT_EQ(model_.forward.attention.kind, schemas::AttentionKind::kGroupedQuery);  // glm4_moe's override
  EXPECT_EQ(model_.kv_lora_rank, 0);                                                // GQA attention, not MLA
  EXPECT_EQ(model_.rotary_dim, 4);  // partial_rotary_factor 0.5 of head_dim 8
  EXPECT_TRUE(model_.attention_bias && model_.o_bias && model_.score_bias);
  EXPECT_EQ(model_.shared_intermediate, model_.moe_intermediate);
  EXPECT_EQ(model_.first_dense_layers, 1);
  ExpectDroppedAllReduceCaught("glm-4.5-air", FsdpEpTpMesh(1, 1, 2));
}

TEST_F(FamilyNumericCheckTest, FalconAgreesInBothArchitectures) {
  // Falcon-7B: classic multi-query (one kv head, one input_layernorm); Falcon-40B: the new decoder
  // architecture (8 kv groups, ln_attn + ln_mlp).
  // (The full Falcon-7B's 71 heads forbid tp=2 in its own plan; its tiny model has 4 heads.)
  for (const char* example : {"falcon-7b", "falcon-40b"}) {
    ExpectAgreement(example, {FsdpEpTpMesh(1, 1, 2), FsdpEpTpMesh(2, 1, 2), FsdpEpTpMesh(4, 1, 1)});
    EXPECT_EQ(model_.attention_norm, std::string(example) == "falcon-40b" ? "ln_attn" : "input_layernorm");
    EXPECT_EQ(model_.mlp_norm, std::string(example) == "falcon-40b" ? "ln_mlp" : "");
    EXPECT_EQ(model_.kv_heads, std::string(example) == "falcon-40b" ? 2 : 1);
    EXPECT_EQ(model_.forward.block, schemas::BlockKind::kParallel);
    EXPECT_FALSE(model_.tied_embeddings);  // the tree has lm_head
    ExpectDroppedAllReduceCaught(example, FsdpEpTpMesh(1, 1, 2));
  }
}

TEST_F(FamilyNumericCheckTest, GptOssAgreesOnTpFsdpAndEp) {
  ExpectAgreement("gpt-oss-20b",
                  {FsdpEpTpMesh(1, 1, 2), FsdpEpTpMesh(2, 1, 2), FsdpEpTpMesh(1, 2, 1), FsdpEpTpMesh(2, 2, 2)});
  EXPECT_EQ(model_.forward.attention.sinks, "self_attn/sinks");
  EXPECT_EQ(model_.layer_types, (std::vector<std::string>{"sliding_attention", "full_attention"}));
  EXPECT_EQ(model_.sliding_window, 4);
  EXPECT_DOUBLE_EQ(model_.swiglu_limit, 7.0);
  EXPECT_TRUE(model_.attention_bias && model_.o_bias);
  ExpectDroppedAllReduceCaught("gpt-oss-20b", FsdpEpTpMesh(1, 1, 2));
}

TEST_F(FamilyNumericCheckTest, Llama4TextAgreesOnTpFsdpAndEp) {
  // llama4_text alone, then inside the multimodal llama4 (text tower under language_model/, the shrunk
  // vision tower's shards checked but not run).
  for (const char* example : {"llama-4-scout:text_config", "llama-4-scout"}) {
    ExpectAgreement(example,
                    {FsdpEpTpMesh(1, 1, 2), FsdpEpTpMesh(2, 1, 2), FsdpEpTpMesh(1, 2, 1), FsdpEpTpMesh(2, 2, 2)});
    EXPECT_EQ(model_.param_prefix, std::string(example) == "llama-4-scout" ? "language_model/" : "");
    EXPECT_EQ(model_.layer_types, (std::vector<std::string>{"chunked_attention", "full_attention"}));
    EXPECT_EQ(model_.attention_chunk, 4);
    EXPECT_EQ(model_.nope_layers, (std::vector<bool>{false, true}));
    EXPECT_EQ(model_.sparse_layers, (std::vector<bool>{false, true}));
    EXPECT_TRUE(model_.l2_qk_norm);
    EXPECT_EQ(model_.forward.attention.rope, schemas::RopeKind::kInterleaved);
    EXPECT_EQ(model_.top_k, 1);
    ExpectDroppedAllReduceCaught(example, FsdpEpTpMesh(1, 1, 2));
  }
}

TEST_F(FamilyNumericCheckTest, Qwen3NextAgreesOnTpFsdpAndEp) {
  ExpectAgreement("qwen3-next-80b-a3b",
                  {FsdpEpTpMesh(1, 1, 2), FsdpEpTpMesh(2, 1, 2), FsdpEpTpMesh(1, 2, 1), FsdpEpTpMesh(2, 2, 2)});
  EXPECT_EQ(model_.layer_types, (std::vector<std::string>{"linear_attention", "full_attention"}));
  EXPECT_EQ(model_.sparse_layers, (std::vector<bool>{true, true}));
  EXPECT_TRUE(model_.forward.zero_centered_norms && model_.forward.attention.output_gate);
  EXPECT_EQ(model_.linear_value_heads, 2 * model_.linear_key_heads);  // the full model's 32 / 16
  EXPECT_EQ(model_.rotary_dim, 2);                                    // partial_rotary_factor 0.25 of 8
  ExpectDroppedAllReduceCaught("qwen3-next-80b-a3b", FsdpEpTpMesh(1, 1, 2));
}

// The structures of schemas/forwards.yaml added for families that had no forward pass: each agrees with
// its unsharded run on tp, fsdp and ep meshes, catches a dropped all-reduce, and takes the mechanisms its
// structure names from the tree.
TEST_F(FamilyNumericCheckTest, DataOnlyStructuresAgreeOnTpFsdpAndEp) {
  for (const char* example :
       {"gemma-2-9b", "gemma-3-4b", "phi-3-mini", "olmo-2-7b", "exaone-4.0-32b", "glm-4-9b-0414", "starcoder2-7b",
        "internlm2.5-7b", "command-r7b", "gpt-j-6b", "pythia-6.9b", "stablelm-2-1.6b", "smollm3-3b"}) {
    SCOPED_TRACE(example);
    ExpectAgreement(example, {FsdpEpTpMesh(1, 1, 2), FsdpEpTpMesh(2, 1, 2), FsdpEpTpMesh(2, 2, 1)});
    ExpectDroppedAllReduceCaught(example, FsdpEpTpMesh(1, 1, 2));
  }
}

TEST_F(FamilyNumericCheckTest, StructuresPlaceNormsAndBlocksAsTheirModelCode) {
  Check("gemma-2-9b", FsdpEpTpMesh(1, 1, 2));  // sandwich norms, 1 + weight
  EXPECT_EQ(model_.attention_output_norm, "post_attention_layernorm");
  EXPECT_EQ(model_.mlp_norm, "pre_feedforward_layernorm");
  EXPECT_TRUE(model_.forward.zero_centered_norms && model_.forward.scale_embedding);
  Check("olmo-2-7b", FsdpEpTpMesh(1, 1, 2));  // post-norms only, full-width q/k norms
  EXPECT_EQ(model_.attention_norm, "");
  EXPECT_EQ(model_.mlp_output_norm, "post_feedforward_layernorm");
  EXPECT_TRUE(model_.qk_norm);
  EXPECT_EQ(model_.forward.attention.qk_norm, schemas::QkNormKind::kFullWidth);
  Check("exaone-4.0-32b", FsdpEpTpMesh(1, 1, 2));  // olmo2's placement, per-head q/k norms (its override)
  EXPECT_EQ(model_.forward.attention.qk_norm, schemas::QkNormKind::kPerHead);
  Check("phi-3-mini", FsdpEpTpMesh(1, 1, 2));  // fused qkv and gate_up
  EXPECT_EQ(model_.forward.attention.layout, schemas::FusedQkvLayout::kBlocks);
  EXPECT_EQ(model_.forward.mlp.gate_up, "mlp/gate_up_proj");
  Check("pythia-6.9b", FsdpEpTpMesh(1, 1, 2));  // parallel residual with two LayerNorms
  EXPECT_EQ(model_.forward.block, schemas::BlockKind::kParallel);
  EXPECT_EQ(model_.mlp_norm, "post_attention_layernorm");
  EXPECT_EQ(model_.norm_weight, "scale");
  EXPECT_TRUE(model_.norm_bias);
  Check("stablelm-2-1.6b", FsdpEpTpMesh(1, 1, 2));  // use_parallel_residual false: the sequential block
  EXPECT_EQ(model_.forward.block, schemas::BlockKind::kSequential);
  Check("command-r7b", FsdpEpTpMesh(1, 1, 2));  // one bias-free LayerNorm feeding both branches
  EXPECT_EQ(model_.forward.block, schemas::BlockKind::kParallel);
  EXPECT_EQ(model_.mlp_norm, "");
  EXPECT_FALSE(model_.norm_bias);
}

}  // namespace
}  // namespace easyplan::kernels
