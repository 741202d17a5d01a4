// The numeric check of the families whose layers live in their own files (kernels/model_<family>.cc), of
// GLM-4.5 (DeepSeek's MoE forward pass with GQA attention) and of the MoE mechanisms beyond stacked experts
// on the fused path (expert layouts, the expert loop, sparsemixer and softmax group-limited routing): each
// bundled example's tiny model, derived from its family's numeric_check block as `easyplan check --level
// numeric` derives it, planned with the built-in rules on several meshes, agrees sharded and unsharded; a
// dropped all-reduce is caught.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/json_parse.h"
#include "kernels/dry_run.h"
#include "kernels/forward_pass.h"
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
  // `sets` are the user's --set over the example, before the tiny config's own.
  NumericReport Check(const std::string& example, const Mesh& mesh, Injection injection = Injection::kNone,
                      const std::vector<std::string>& sets = {}) {
    const schemas::ResolvedConfig full = Resolve(example, sets);
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
    std::vector<std::string> tiny_sets = sets;
    tiny_sets.insert(tiny_sets.end(), tiny->sets.begin(), tiny->sets.end());
    const schemas::ResolvedConfig resolved = Resolve(example, tiny_sets);
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
    plan_ = *plan;
    tree_ = *tree;
    auto report = RunNumericCheck(model_, *plan, *tree, NumericOptions{.seed = 3, .injection = injection});
    EXPECT_TRUE(report.ok()) << report.status().ToString();
    return report.ok() ? std::move(*report) : NumericReport();
  }

  void ExpectAgreement(const std::string& example, const std::vector<Mesh>& meshes,
                       const std::vector<std::string>& sets = {}) {
    for (const Mesh& mesh : meshes) {
      const NumericReport r = Check(example, mesh, Injection::kNone, sets);
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

  void ExpectDroppedAllReduceCaught(const std::string& example, const Mesh& mesh,
                                    const std::vector<std::string>& sets = {}) {
    const NumericReport r = Check(example, mesh, Injection::kDropAllReduce, sets);
    EXPECT_EQ(r.comm.dropped_all_reduces, 1) << example;
    EXPECT_FALSE(r.ok()) << example;
    EXPECT_TRUE(std::any_of(r.comparisons.begin(), r.comparisons.end(), [](const Comparison& c) { return !c.ok; }))
        << example;
  }

  // The collectives of the last Check whose op names `what`.
  static std::vector<CommRecord> RecordsNaming(const NumericReport& r, const std::string& what) {
    std::vector<CommRecord> out;
    for (const CommRecord& c : r.comm.records) {
      if (c.op.find(what) != std::string::npos) out.push_back(c);
    }
    return out;
  }

  schemas::SchemaSet schemas_;
  rules::RuleLibrary rules_;
  ModelDesc model_;  ///< the last Check's tiny model
  planner::Plan plan_;
  ParamTree tree_;
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
    EXPECT_EQ(model_.attention_chunk_size, 4);
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

// DBRX (EasyDeL c14e25c9 DbrxExperts): experts packed [E x F, H] in three ArrayParams, run by the
// module's loop over every expert on every token. No fused MoE path, so no all-to-all whatever the mesh;
// each packed parameter's rows are gathered once per layer (the loop's static slices, CSE'd), not once per
// expert; the rest is what the plan's specs make of each expert's MLP.
TEST_F(FamilyNumericCheckTest, DbrxPackedExpertsRunInTheExpertLoop) {
  // (ep alone moves nothing: DBRX's rules have no expert axis and its loop no shard_map.)
  ExpectAgreement("dbrx-instruct",
                  {FsdpEpTpMesh(1, 1, 2), FsdpEpTpMesh(2, 1, 2), FsdpEpTpMesh(4, 1, 1), FsdpEpTpMesh(2, 2, 2)});
  EXPECT_EQ(model_.forward.name, "dbrx");
  EXPECT_EQ(model_.forward.moe.layout, schemas::ExpertsLayout::kPackedRows);
  EXPECT_EQ(model_.forward.moe.execution, schemas::ExpertsExecution::kExpertLoop);
  EXPECT_EQ(model_.expert_kernel_leaf, "");  // experts/mlp/w1 is the parameter itself
  EXPECT_EQ(model_.top_k, 4);
  EXPECT_EQ(model_.forward.attention.layout, schemas::FusedQkvLayout::kBlocks);
  EXPECT_EQ(model_.norm_weight, "scale");
  EXPECT_FALSE(model_.norm_bias || model_.head_bias || model_.router_bias || model_.attention_bias);
  // fsdp=4: w1 and v1 [E x F, H] hold their rows over fsdp (ColumnWise), w2 over tp (RowWise, tp=1 here).
  const NumericReport r = Check("dbrx-instruct", FsdpEpTpMesh(4, 1, 1));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.comm.Bytes(CollectiveKind::kAllToAll), 0);
  for (const char* packed : {"ffn/experts/mlp/w1", "ffn/experts/mlp/v1"}) {
    const std::vector<CommRecord> gathers = RecordsNaming(r, std::string(packed) + " (every expert's slice");
    ASSERT_EQ(gathers.size(), 2u) << packed;  // once in each of the 2 layers
    // [E x F, H] over 4 devices: 3 of the 4 row blocks arrive, 2 bytes an element.
    const int64_t rows = model_.experts * model_.moe_intermediate, hidden = model_.hidden;
    EXPECT_EQ(gathers[0].kind, CollectiveKind::kAllGather);
    EXPECT_EQ(gathers[0].bytes_per_device, rows * hidden * 3 / 4 * 2) << packed;
  }
  // The step model's dry run sees a parameter's gather (overlapped, repeated in the backward pass).
  auto dry = DryRunForward(model_, plan_, tree_);
  ASSERT_TRUE(dry.ok()) << dry.status().ToString();
  bool seen = false;
  for (const CommRecord& c : dry->comm.records) {
    if (c.op.find("(every expert's slice") == std::string::npos) continue;
    seen = true;
    EXPECT_TRUE(c.parameter) << c.op;
  }
  EXPECT_TRUE(seen);
  EXPECT_TRUE(RecordsNaming(r, "ffn/experts/mlp/w2 (every expert's slice").empty());  // its rows are whole
  ExpectDroppedAllReduceCaught("dbrx-instruct", FsdpEpTpMesh(1, 1, 2));
}

// PhiMoE (EasyDeL 090a03b2 PhiMoeSparseMoeBlock): one module per expert (experts/<e>/w1, w3, w2), tokens
// flattened to [B x S, H], sparsemixer routing, LayerNorms with biases and the lm_head's bias.
TEST_F(FamilyNumericCheckTest, PhiMoePerExpertModulesRunInTheExpertLoop) {
  ExpectAgreement("phi-3.5-moe", {FsdpEpTpMesh(1, 1, 2), FsdpEpTpMesh(2, 1, 2), FsdpEpTpMesh(2, 2, 1),
                                  planner::plan_testing::FiveAxisMesh(1, 2, 1, 2, 2)});
  EXPECT_EQ(model_.forward.moe.layout, schemas::ExpertsLayout::kPerExpert);
  EXPECT_EQ(model_.forward.moe.router_kind, schemas::RouterKind::kSparseMixer);
  EXPECT_TRUE(model_.forward.moe.flatten_tokens);
  EXPECT_DOUBLE_EQ(model_.router_jitter_noise, 0.01);  // the example's router_jitter_noise
  EXPECT_EQ(model_.expert_kernel_leaf, "kernel");
  EXPECT_TRUE(model_.head_bias && model_.attention_bias && model_.o_bias && model_.norm_bias);
  EXPECT_EQ(model_.norm_weight, "scale");
  // sp=2 shards the sequence: flattening the tokens gathers it before the router, in every MoE layer.
  const NumericReport r = Check("phi-3.5-moe", planner::plan_testing::FiveAxisMesh(1, 2, 1, 2, 2));
  ASSERT_TRUE(r.ok());
  const std::vector<CommRecord> flattened = RecordsNaming(r, "flattened tokens");
  ASSERT_EQ(flattened.size(), 2u);
  EXPECT_EQ(flattened[0].kind, CollectiveKind::kAllGather);
  EXPECT_EQ(r.comm.Bytes(CollectiveKind::kAllToAll), 0);
  EXPECT_TRUE(RecordsNaming(Check("phi-3.5-moe", FsdpEpTpMesh(2, 1, 2)), "flattened tokens").empty());
  ExpectDroppedAllReduceCaught("phi-3.5-moe", FsdpEpTpMesh(1, 1, 2));
}

// GraniteMoE (transformers GraniteMoeMoE; no EasyDeL module): fused experts [H, 2I, E] and [I, H, E] with
// the expert dim last, on the fused MoE path, whose ragged all-to-all runs over ep; a top-k softmax router
// without a bias.
TEST_F(FamilyNumericCheckTest, GraniteMoeExpertsLastRunOnTheFusedPath) {
  ExpectAgreement("granite-3.1-1b-a400m",
                  {FsdpEpTpMesh(1, 1, 2), FsdpEpTpMesh(2, 1, 2), FsdpEpTpMesh(1, 2, 1), FsdpEpTpMesh(2, 2, 2)});
  EXPECT_EQ(model_.forward.moe.layout, schemas::ExpertsLayout::kExpertsLast);
  EXPECT_EQ(model_.forward.moe.execution, schemas::ExpertsExecution::kFusedMoe);
  EXPECT_EQ(model_.forward.moe.experts, schemas::ExpertsKind::kFusedHalvesSilu);
  EXPECT_FALSE(model_.router_bias);
  EXPECT_TRUE(model_.tied_embeddings);
  const NumericReport r = Check("granite-3.1-1b-a400m", FsdpEpTpMesh(1, 2, 1));
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r.comm.Bytes(CollectiveKind::kAllToAll), 0);
  ExpectDroppedAllReduceCaught("granite-3.1-1b-a400m", FsdpEpTpMesh(1, 1, 2));
}

// DeepSeek-V2 (EasyDeL 090a03b2 DeepseekV2MoE): DeepSeek-V2-Lite routes greedily (softmax top-k); with
// topk_method group_limited_greedy the softmax scores are group-limited before top-k.
TEST_F(FamilyNumericCheckTest, DeepseekV2RoutesBySoftmaxGreedyOrGroupLimited) {
  const std::vector<Mesh> meshes = {FsdpEpTpMesh(1, 1, 2), FsdpEpTpMesh(2, 1, 2), FsdpEpTpMesh(1, 2, 1),
                                    FsdpEpTpMesh(2, 2, 2)};
  ExpectAgreement("deepseek-v2-lite", meshes);
  EXPECT_EQ(model_.forward.moe.router_kind, schemas::RouterKind::kSoftmaxTopK);
  EXPECT_EQ(model_.n_group, 1);
  EXPECT_FALSE(model_.score_bias);
  EXPECT_FALSE(model_.norm_topk_prob);  // the config's false
  EXPECT_EQ(model_.sparse_layers, (std::vector<bool>{false, true}));
  const std::vector<std::string> grouped = {"topk_method=group_limited_greedy", "n_group=4", "topk_group=2",
                                            "norm_topk_prob=true", "routed_scaling_factor=16.0"};
  ExpectAgreement("deepseek-v2-lite", meshes, grouped);
  EXPECT_EQ(model_.forward.moe.router_kind, schemas::RouterKind::kSoftmaxGroupLimited);
  EXPECT_EQ(model_.n_group, 4);
  EXPECT_EQ(model_.topk_group, 2);
  EXPECT_TRUE(model_.norm_topk_prob);
  EXPECT_DOUBLE_EQ(model_.routed_scaling, 16.0);
  // DeepseekV2MoE renormalises only when it routes to more than one expert.
  Check("deepseek-v2-lite", FsdpEpTpMesh(1, 1, 2), Injection::kNone, {"num_experts_per_tok=1", "norm_topk_prob=true"});
  EXPECT_FALSE(model_.norm_topk_prob);
  ExpectDroppedAllReduceCaught("deepseek-v2-lite", FsdpEpTpMesh(1, 1, 2), grouped);
}

// The mechanisms combine only where EasyDeL's code does: per-expert modules have no stacked kernel for the
// fused path and name their modules with '{e}'; the expert loop runs gated experts; Llama 4's router
// scales the inputs of experts on the fused path.
TEST_F(FamilyNumericCheckTest, MoeMechanismsThatDoNotCombineAreBadInput) {
  Check("phi-3.5-moe", FsdpEpTpMesh(1, 1, 2));
  const Mesh mesh = FsdpEpTpMesh(1, 1, 2);
  ASSERT_TRUE(CheckMoeBlock(model_, mesh).ok());
  ModelDesc fused = model_;
  fused.forward.moe.execution = schemas::ExpertsExecution::kFusedMoe;
  EXPECT_EQ(CheckMoeBlock(fused, mesh).ToString(),
            "error: forward structure 'phimoe': moe.layout 'per_expert' has no stacked expert kernel for the fused "
            "MoE path to shard: such a module loops over its experts (moe.execution 'expert_loop')");
  ModelDesc unnamed = model_;
  unnamed.forward.moe.up = "experts/w3";
  EXPECT_NE(CheckMoeBlock(unnamed, mesh).ToString().find("found 'experts/w3'"), std::string::npos);
  ModelDesc halves = model_;
  halves.forward.moe.experts = schemas::ExpertsKind::kFusedHalvesSilu;
  EXPECT_NE(CheckMoeBlock(halves, mesh).ToString().find("moe.execution 'expert_loop' runs moe.experts 'gated_silu'"),
            std::string::npos);
  Check("llama-4-scout:text_config", mesh);
  ModelDesc looped = model_;
  looped.forward.moe.execution = schemas::ExpertsExecution::kExpertLoop;
  EXPECT_NE(CheckMoeBlock(looped, mesh).ToString().find("'top_k_sigmoid_input' scales the experts' inputs"),
            std::string::npos);
  // The same model with its loop run as the fused path would dereference per-expert names it cannot stack:
  // the numeric check refuses it before running.
  auto refused = RunNumericCheck(fused, plan_, tree_, NumericOptions{.seed = 3});
  EXPECT_FALSE(refused.ok());
}

// The routing rules on one token, by hand.
TEST(MoeRoutingTest, GroupLimitedRanksGroupsByTheirMaxOrTopTwo) {
  // Two groups of two: group 0 holds the best single score, group 1 the best pair.
  const std::vector<double> scores = {0.5, 0.0, 0.3, 0.3};
  std::vector<double> v2 = scores, v3 = scores;
  internal::LimitGroups(v2.data(), 4, 2, 1, internal::GroupScore::kMax, 0.0);  // DeepSeek-V2
  EXPECT_EQ(v2, (std::vector<double>{0.5, 0.0, 0.0, 0.0}));
  internal::LimitGroups(v3.data(), 4, 2, 1, internal::GroupScore::kTopTwoSum, -1.0);  // DeepSeek-V3
  EXPECT_EQ(v3, (std::vector<double>{-1.0, -1.0, 0.3, 0.3}));
  // Equal group scores keep the lower group.
  std::vector<double> tie = {0.2, 0.1, 0.2, 0.1};
  internal::LimitGroups(tie.data(), 4, 2, 1, internal::GroupScore::kMax, 0.0);
  EXPECT_EQ(tie, (std::vector<double>{0.2, 0.1, 0.0, 0.0}));
}

TEST(MoeRoutingTest, SparseMixerWeighsEachChoiceWithinItsJitterThreshold) {
  const std::vector<double> logits = {2.0, 1.99, 0.0, -1.0};
  std::vector<double> w(4);
  // jitter 0.01: only logits within 2 x 0.01 of the top (relative to max(|logit|, top)) join its softmax:
  // the first expert shares with the second, the second (the first masked out) is alone.
  internal::SparseMixerRow(logits.data(), 4, 0.01, w.data());
  EXPECT_NEAR(w[0], 1.0 / (1.0 + std::exp(1.99 - 2.0)), 1e-15);
  EXPECT_DOUBLE_EQ(w[1], 1.0);
  EXPECT_EQ(w[2], 0.0);
  EXPECT_EQ(w[3], 0.0);
  // jitter 0.6 (threshold 1.2): (2 - 0) / 2 = 1 joins the first's softmax, (2 + 1) / 2 = 1.5 does not;
  // for the second, (1.99 - 0) / 1.99 = 1 joins and (1.99 + 1) / 1.99 does not.
  internal::SparseMixerRow(logits.data(), 4, 0.6, w.data());
  EXPECT_NEAR(w[0], std::exp(2.0) / (std::exp(2.0) + std::exp(1.99) + std::exp(0.0)), 1e-15);
  EXPECT_NEAR(w[1], std::exp(1.99) / (std::exp(1.99) + std::exp(0.0)), 1e-15);
  EXPECT_EQ(w[2], 0.0);
  EXPECT_EQ(w[3], 0.0);
  // Equal maxima: argmax takes the first, then the next.
  const std::vector<double> equal = {1.0, 3.0, 3.0, 0.5};
  internal::SparseMixerRow(equal.data(), 4, 0.01, w.data());
  EXPECT_DOUBLE_EQ(w[1], 0.5);  // shares its softmax with the equal expert 2
  EXPECT_DOUBLE_EQ(w[2], 1.0);
  EXPECT_EQ(w[0] + w[3], 0.0);
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
