// eSurge's RaggedPagesCache (easydel/caching/ragged_page/cache.py) as unit tests: v2 and v3 geometry,
// the shard count and its fallbacks, and the inputs EasyDeL computes at run time.
#include "planner/ragged_cache.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "planner/activations_test_util.h"

namespace easyplan::planner {
namespace {

using activations_testing::DP;
using activations_testing::KernelTest;
using activations_testing::N;
using activations_testing::TP;
using plan_testing::FiveAxisMesh;
using plan_testing::P;

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
    request.attention.mode = Mode::kDecode;
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
  request.attention.mode = Mode::kDecode;
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
