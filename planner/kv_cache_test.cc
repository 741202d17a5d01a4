// EasyDeL's TransformerCache (easydel/caching/transformer/cache.py) as unit tests: the specs it is
// stored with in every mode, its sanitiser, the rows and bytes it adds to a plan, each layer's geometry
// (GQA, sliding, chunked, linear attention, MLA) and the reshard a decode step causes.
#include "planner/kv_cache.h"

#include <gtest/gtest.h>

#include <array>
#include <map>

#include "planner/activations_test_util.h"

namespace easyplan::planner {
namespace {

using activations_testing::ActivationsTest;
using activations_testing::B;
using activations_testing::DP;
using activations_testing::FSDP;
using activations_testing::kAllModes;
using activations_testing::kC1;
using activations_testing::kC2;
using activations_testing::N;
using activations_testing::SP;
using activations_testing::TP;
using plan_testing::FiveAxisMesh;
using plan_testing::P;

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
    for (Mode mode : kAllModes) {
      auto plan = Build(config, mesh, mode, std::nullopt, std::nullopt);
      ASSERT_TRUE(plan.ok());
      EXPECT_EQ(plan->cache_key, Resolve(*table_.FindCache("key"), config, Mode::kTrain));
    }
    std::string unknown;
    const PartitionSpec raw = Resolve(*table_.FindCache("key"), config, Mode::kTrain);
    EXPECT_EQ(SanitizeCacheSpec(raw, {shape, shape}, mesh, &unknown), row.stored);
    EXPECT_TRUE(unknown.empty());
    const PartitionSpec index = Resolve(*table_.FindCache("indexs"), config, Mode::kTrain);
    EXPECT_EQ(SanitizeCacheSpec(index, {Shape{row.shape[0]}}, mesh, nullptr), row.index);
  }
}

TEST_F(ActivationsTest, Section42CacheRowsThroughThePlan) {
  // Row 4: a 4095-token window on fsdp2,tp2,sp2 drops sp; the plan reports it once per dim with a count.
  const Json config = Config({}, R"(, "sliding_window": 4095)");
  auto plan = Build(config, FiveAxisMesh(1, 2, 1, 2, 2), Mode::kPrefill, 4, 8192);
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
  // GQA: 4 layers of key + value (2, 8192, 8, 128) bfloat16 (kvdtype follows attn_dtype, bfloat16 at
  // EasyDeL 090a03b2) + indexs/starts (2,) int32, on tp=2, sp=2.
  const Json config = Config();
  auto plan = Build(config, FiveAxisMesh(1, 1, 1, 2, 2), Mode::kDecode, 2, 8192);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const int64_t kv = 2 * 8192 * 8 * 128 * 2;
  EXPECT_EQ(plan->cache_bytes, 4 * (2 * kv + 2 * 8));
  EXPECT_EQ(plan->cache_bytes_per_device, 4 * (2 * kv / 4 + 2 * 8));
  EXPECT_EQ(plan->cache_key, P({B, SP, TP, N}));
  EXPECT_FALSE(plan->cache_reshard);
  EXPECT_EQ(FindCode(*plan, FindingCode::kCacheReshard), nullptr);
}

TEST_F(ActivationsTest, Section42DecodeReshardUnderC1AndC2) {
  const Mesh mesh = FiveAxisMesh(2, 2, 1, 2, 2);
  auto c1 = Build(Config(kC1), mesh, Mode::kDecode, 8, 4096);
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

  auto c2 = Build(Config(kC2), mesh, Mode::kDecode, 8, 4096);
  ASSERT_TRUE(c2.ok());
  EXPECT_EQ(c2->cache_key, P({B, SP, N, N}));
  EXPECT_EQ(c2->cache_decode_key, P({DP, FSDP, N, N}));
  EXPECT_TRUE(c2->cache_reshard);
  // Train mode has no decode step: the flag is set, but no finding.
  auto c2_train = Build(Config(kC2), mesh, Mode::kTrain, std::nullopt, std::nullopt);
  EXPECT_TRUE(c2_train->cache_reshard);
  EXPECT_EQ(FindCode(*c2_train, FindingCode::kCacheReshard), nullptr);
  // When fsdp = 1, ('fsdp', 'dp') and 'dp' are the same layout: no reshard.
  auto same = Build(Config(kC1), FiveAxisMesh(2, 1, 1, 2, 1), Mode::kDecode, 8, 4096);
  EXPECT_FALSE(same->cache_reshard);
}

TEST_F(ActivationsTest, UseShardedKvCachingChangesNothing) {
  const Mesh mesh = FiveAxisMesh(1, 2, 1, 2, 2);
  auto plain = Build(Config(), mesh, Mode::kDecode, 4, 1024);
  auto sharded = Build(Config({"use_sharded_kv_caching=true", "kv_cache_sharding_sequence_axis_name=tp"}), mesh,
                       Mode::kDecode, 4, 1024);
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

  auto plan = Build(config, FiveAxisMesh(1, 1, 1, 1, 1), Mode::kDecode, 2, 4096);
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
  const int64_t kv_bytes = 2 * 8 * 128 * 2;  // per token, key + value, bfloat16 (the test config's kvdtype)
  const int64_t index_bytes = 2 * 2 * 4;     // indexs + starts per layer
  // The conv state in kvdtype (bfloat16 at 090a03b2), the recurrent state float32.
  const int64_t state_bytes = 2 * (2 * 192 * 4 * 2 + 2 * 4 * 16 * 32 * 4);
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

}  // namespace
}  // namespace easyplan::planner
