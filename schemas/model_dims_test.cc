// ModelDims of the example configs resolved with the embedded family schemas (so each family's own key
// names reach the canonical ones through its attribute_map), and the errors of badly typed keys.
#include "schemas/model_dims.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/document.h"
#include "core/json_parse.h"
#include "core/yaml_parse.h"
#include "schemas/data_source.h"
#include "schemas/schema_set.h"
#include "tests/test_util.h"

namespace easyplan::schemas {
namespace {

ModelDims DimsOfExample(const std::string& dir, const std::vector<std::string>& sets = {}) {
  const std::string path = testing::SourceDir() + "/examples/" + dir + "/config.json";
  auto doc = ParseJsonDocument(testing::ReadTestFile(path), "config.json");
  EXPECT_TRUE(doc.ok());
  SchemaSet schemas(DataSource::Embedded());
  ConfigInput input{std::move(*doc), std::nullopt, sets};
  auto resolved = ResolveConfig(input, ResolveOptions{}, schemas);
  EXPECT_TRUE(resolved.ok()) << resolved.status().ToString();
  auto dims = ModelDimsOf(*resolved);
  EXPECT_TRUE(dims.ok()) << dims.status().ToString();
  return *dims;
}

StatusOr<ModelDims> DimsOfJson(const char* text) { return ModelDimsOf(Json::parse(text)); }

TEST(ModelDimsTest, FamilyGeometryWinsOverTheConfigsOwnKeys) {
  const Json config = Json::parse(R"({"hidden_size": 64, "num_attention_heads": 4, "hidden_act": "gelu",
                                      "num_local_experts": 2})");
  const Json geometry = Json::parse(R"({"": {"num_local_experts": 16, "gated_mlp": false}})");
  auto dims = ModelDimsOf(config, geometry);
  ASSERT_TRUE(dims.ok()) << dims.status().ToString();
  EXPECT_EQ(dims->experts, 16);
  EXPECT_FALSE(dims->gated_mlp);  // hidden_act alone would say gated
  EXPECT_TRUE(ModelDimsOf(config)->gated_mlp);
}

TEST(ModelDimsTest, DbrxDimsComeFromItsNestedConfigsThroughGeometry) {
  const ModelDims d = DimsOfExample("dbrx-instruct");
  EXPECT_EQ(d.experts, 16);
  EXPECT_EQ(d.top_k, 4);
  EXPECT_EQ(d.kv_heads, 8);
  EXPECT_EQ(d.moe_intermediate, 10752);
}

TEST(ModelDimsTest, HybridLayerTypesAndLinearAttentionDims) {
  const ModelDims next = DimsOfExample("qwen3-next-80b-a3b");
  EXPECT_EQ(std::count(next.layer_types.begin(), next.layer_types.end(), "linear_attention"), 36);
  EXPECT_EQ(next.linear_key_heads, 16);
  EXPECT_EQ(next.linear_value_heads, 32);
  EXPECT_EQ(next.linear_key_dim, 128);
  EXPECT_EQ(next.linear_value_dim, 128);
  EXPECT_EQ(next.linear_conv_kernel, 4);
  const ModelDims scout = DimsOfExample("llama-4-scout");
  EXPECT_EQ(scout.attention_chunk_size, 8192);
  EXPECT_EQ(std::count(scout.layer_types.begin(), scout.layer_types.end(), "chunked_attention"), 36);
}

TEST(ModelDimsTest, KimiK2IsDeepseekV3ByAlias) {
  const ModelDims d = DimsOfExample("kimi-k2");
  EXPECT_TRUE(d.mla());
  EXPECT_EQ(d.experts, 384);
  EXPECT_EQ(d.first_dense_layers, 1);
}

TEST(ModelDimsTest, LlamaIsDenseGqaWithRmsNorm) {
  const ModelDims d = DimsOfExample("llama-3.1-8b");
  EXPECT_EQ(d.model_type, "llama");
  EXPECT_EQ(d.pointer, "");
  EXPECT_EQ(d.hidden, 4096);
  EXPECT_EQ(d.layers, 32);
  EXPECT_EQ(d.heads, 32);
  EXPECT_EQ(d.kv_heads, 8);
  EXPECT_EQ(d.head_dim, 128);
  EXPECT_EQ(d.intermediate, 14336);
  EXPECT_EQ(d.vocab, 128256);
  EXPECT_EQ(d.max_positions, 131072);
  EXPECT_TRUE(d.gated_mlp);
  EXPECT_FALSE(d.tied_embeddings);
  EXPECT_DOUBLE_EQ(d.norm_eps, 1e-5);
  EXPECT_DOUBLE_EQ(d.rope_theta, 500000.0);
  EXPECT_EQ(d.torch_dtype, "bfloat16");
  EXPECT_EQ(d.experts, 0);
  EXPECT_EQ(d.moe_layers, 0);
  EXPECT_FALSE(d.mla());
  // EasyDeL's default PartitionAxis.
  EXPECT_EQ(d.axes.batch, (std::vector<std::string>{"fsdp", "dp"}));
  EXPECT_EQ(d.axes.sequence, (std::vector<std::string>{"sp"}));
  EXPECT_EQ(d.axes.head, (std::vector<std::string>{"tp"}));
}

TEST(ModelDimsTest, Gpt2OwnNamesReachTheCanonicalDimsThroughItsAttributeMap) {
  const ModelDims d = DimsOfExample("gpt2");
  EXPECT_EQ(d.hidden, 768);          // n_embd
  EXPECT_EQ(d.layers, 12);           // n_layer
  EXPECT_EQ(d.heads, 12);            // n_head
  EXPECT_EQ(d.max_positions, 1024);  // n_positions
  EXPECT_EQ(d.kv_heads, 12);         // derived in gpt2.yaml
  EXPECT_EQ(d.head_dim, 64);
  EXPECT_EQ(d.intermediate, 3072);  // n_inner null: 4 x n_embd
  EXPECT_FALSE(d.gated_mlp);        // activation_function, no hidden_act
  EXPECT_TRUE(d.tied_embeddings);
  EXPECT_DOUBLE_EQ(d.norm_eps, 1e-5);  // layer_norm_epsilon
}

TEST(ModelDimsTest, DeepseekV3RoutedExpertsSharedExpertsAndLatentAttention) {
  const ModelDims d = DimsOfExample("deepseek-v3");
  EXPECT_EQ(d.experts, 256);  // n_routed_experts
  EXPECT_EQ(d.top_k, 8);
  EXPECT_EQ(d.moe_intermediate, 2048);
  EXPECT_EQ(d.shared_intermediate, 2048);  // one shared expert
  EXPECT_EQ(d.first_dense_layers, 3);
  EXPECT_EQ(d.moe_layers, 58);  // mlp_layer_types, derived from first_k_dense_replace
  EXPECT_TRUE(d.norm_topk_prob);
  EXPECT_EQ(d.n_group, 8);
  EXPECT_EQ(d.topk_group, 4);
  EXPECT_DOUBLE_EQ(d.routed_scaling, 2.5);
  EXPECT_TRUE(d.mla());
  EXPECT_EQ(d.q_lora_rank, 1536);
  EXPECT_EQ(d.kv_lora_rank, 512);
  EXPECT_EQ(d.qk_nope_head_dim, 128);
  EXPECT_EQ(d.qk_rope_head_dim, 64);
  EXPECT_EQ(d.v_head_dim, 128);
  EXPECT_EQ(d.head_dim, 64);  // deepseek_v3.yaml derives head_dim = qk_rope_head_dim
  EXPECT_EQ(DimsOfExample("deepseek-v3", {"q_lora_rank=null"}).q_lora_rank, 0);
}

TEST(ModelDimsTest, MixtralAndQwen3MoeStoreTheExpertCountAsNumLocalExperts) {
  const ModelDims mixtral = DimsOfExample("mixtral-8x7b");
  EXPECT_EQ(mixtral.experts, 8);
  EXPECT_EQ(mixtral.top_k, 2);
  EXPECT_EQ(mixtral.moe_intermediate, mixtral.intermediate);  // no moe_intermediate_size
  EXPECT_EQ(mixtral.moe_layers, 32);
  EXPECT_FALSE(mixtral.norm_topk_prob);  // MixtralConfig has no flag
  const ModelDims qwen = DimsOfExample("qwen3-30b-a3b");
  EXPECT_EQ(qwen.experts, 128);
  EXPECT_EQ(qwen.top_k, 8);
  EXPECT_EQ(qwen.moe_intermediate, 768);
  EXPECT_EQ(qwen.shared_intermediate, 0);
}

TEST(ModelDimsTest, Gemma3ReadsItsTextConfig) {
  const ModelDims d = DimsOfExample("gemma-3-4b");
  EXPECT_EQ(d.pointer, "/text_config");
  EXPECT_EQ(d.model_type, "gemma3_text");
  EXPECT_EQ(d.hidden, 2560);
  EXPECT_EQ(d.layers, 34);
  EXPECT_EQ(d.sliding_window, 1024);
  EXPECT_EQ(static_cast<int64_t>(d.layer_types.size()), d.layers);
  EXPECT_EQ(d.layer_types[0], "sliding_attention");
}

TEST(ModelDimsTest, Qwen2SlidingWindowSwitch) {
  const ModelDims off = DimsOfExample("qwen2.5-7b");  // qwen2.yaml nulls sliding_window when it is off
  EXPECT_FALSE(off.use_sliding_window);
  EXPECT_EQ(off.sliding_window, 0);
  const ModelDims on = DimsOfExample("qwen2.5-7b", {"use_sliding_window=true"});
  EXPECT_TRUE(on.use_sliding_window);
  EXPECT_EQ(on.sliding_window, 131072);
  EXPECT_EQ(static_cast<int64_t>(on.layer_types.size()), on.layers);
}

TEST(ModelDimsTest, MissingKeysAreZeroAndHeadDimFallsBackToHiddenOverHeads) {
  auto d = DimsOfJson(R"({"hidden_size": 64, "num_attention_heads": 4, "mlp_layer_types": ["dense", "sparse"],
      "num_local_experts": 4, "num_hidden_layers": 2, "shared_expert_intermediate_size": 48})");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->head_dim, 16);
  EXPECT_EQ(d->kv_heads, 4);
  EXPECT_EQ(d->vocab, 0);
  EXPECT_EQ(d->moe_layers, 1);
  EXPECT_EQ(d->shared_intermediate, 48);
  EXPECT_EQ(d->n_group, 1);
  EXPECT_FALSE(d->gated_mlp);
  EXPECT_TRUE(d->axes.head.empty());
}

TEST(ModelDimsTest, WrongTypesNameTheKeyAndWhatWasExpected) {
  auto size = DimsOfJson(R"({"hidden_size": "4096"})");
  ASSERT_FALSE(size.ok());
  EXPECT_EQ(size.status().diag().loc.pointer, "/hidden_size");
  EXPECT_EQ(size.status().diag().message, "expected an integer, found \"4096\" (string)");
  auto types = DimsOfJson(R"({"text_config": {"num_attention_heads": 8, "layer_types": ["full", 3]}})");
  ASSERT_FALSE(types.ok());
  EXPECT_EQ(types.status().diag().loc.pointer, "/text_config/layer_types/1");
  EXPECT_EQ(types.status().diag().message, "expected a string, found 3 (integer)");
  auto axis = DimsOfJson(R"({"partition_axis": {"head_axis": 1}})");
  ASSERT_FALSE(axis.ok());
  EXPECT_EQ(axis.status().diag().loc.pointer, "/partition_axis/head_axis");
  EXPECT_EQ(axis.status().diag().message, "expected a mesh axis name or a list of names, found 1 (integer)");
}

}  // namespace
}  // namespace easyplan::schemas
