#include "kernels/numeric_check.h"

#include <gtest/gtest.h>

#include "kernels/dry_run.h"
#include "kernels/tiny_llama_test_util.h"
#include "rules/rule_library.h"
#include "tests/test_util.h"

namespace easyplan::kernels {
namespace {

class NumericCheckTest : public ::testing::Test {
 protected:
  NumericCheckTest() : library_(schemas::DataSource::Embedded()), config_(TestConfig()) {}

  planner::Plan Plan(const ParamTree& tree, std::vector<std::string> names, std::vector<int64_t> sizes) {
    auto rules = library_.ForModelType("llama");
    EXPECT_TRUE(rules.ok());
    planner::PlanRequest request;
    request.tree = &tree;
    request.rules = *rules;
    request.presets = *library_.GetPresets();
    request.config = &config_;
    request.mesh.axis_names = std::move(names);
    request.mesh.shape = std::move(sizes);
    auto plan = planner::BuildPlan(request);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    return std::move(*plan);
  }

  NumericReport Run(const planner::Plan& plan, const ParamTree& tree, Injection injection = Injection::kNone) {
    auto report = RunNumericCheck(model_, plan, tree, NumericOptions{.seed = 7, .injection = injection});
    if (!report.ok()) {
      ADD_FAILURE() << report.status().ToString();
      return {};
    }
    return std::move(*report);
  }

  rules::RuleLibrary library_;
  Json config_;
  ModelDesc model_ = TinyLlama();
};

TEST_F(NumericCheckTest, TinyLlamaAgreesOnEveryMeshShape) {
  const ParamTree tree = LlamaTree(model_);
  for (const std::vector<int64_t>& sizes : std::vector<std::vector<int64_t>>{
           {1, 8, 1, 1, 1}, {1, 4, 1, 2, 1}, {2, 2, 1, 2, 1}, {1, 2, 1, 2, 2}, {1, 1, 1, 8, 1}}) {
    const planner::Plan plan = Plan(tree, kEasyDelAxes, sizes);
    model_.batch = std::max<int64_t>(2, sizes[0] * sizes[1]);
    const NumericReport r = Run(plan, tree);
    EXPECT_TRUE(r.ok()) << plan.mesh.ToString();
    ASSERT_EQ(r.comparisons.size(), 4u);
    EXPECT_EQ(r.comparisons.back().name, "logits");
    for (const Comparison& c : r.comparisons)
      EXPECT_TRUE(c.ok) << plan.mesh.ToString() << " " << c.name << " " << c.nmse;
  }
}

TEST_F(NumericCheckTest, FsdpTimesTpCommunicates) {
  const ParamTree tree = LlamaTree(model_);
  const NumericReport r = Run(Plan(tree, kEasyDelAxes, {1, 4, 1, 2, 1}), tree);
  EXPECT_GT(r.comm.Bytes(CollectiveKind::kAllGather), 0);
  EXPECT_GT(r.comm.Bytes(CollectiveKind::kAllReduce) + r.comm.Bytes(CollectiveKind::kReduceScatter), 0);
}

TEST_F(NumericCheckTest, DryRunRecordsExactlyTheCollectivesTheNumericCheckMeasures) {
  const ParamTree tree = LlamaTree(model_);
  for (const std::vector<int64_t>& sizes : std::vector<std::vector<int64_t>>{
           {1, 8, 1, 1, 1}, {1, 4, 1, 2, 1}, {2, 2, 1, 2, 1}, {1, 2, 1, 2, 2}, {1, 1, 1, 8, 1}}) {
    const planner::Plan plan = Plan(tree, kEasyDelAxes, sizes);
    model_.batch = std::max<int64_t>(2, sizes[0] * sizes[1]);
    const NumericReport measured = Run(plan, tree);
    auto dry = DryRunForward(model_, plan, tree, {.all_layers = true});
    ASSERT_TRUE(dry.ok()) << dry.status().ToString();
    ASSERT_EQ(dry->comm.records.size(), measured.comm.records.size()) << plan.mesh.ToString();
    for (size_t i = 0; i < measured.comm.records.size(); ++i) {
      const CommRecord& want = measured.comm.records[i];
      const CommRecord& got = dry->comm.records[i];
      EXPECT_EQ(got.kind, want.kind) << plan.mesh.ToString() << " " << want.op;
      EXPECT_EQ(got.scope, want.scope);
      EXPECT_EQ(got.op, want.op);
      EXPECT_EQ(got.bytes_per_device, want.bytes_per_device) << plan.mesh.ToString() << " " << want.op;
    }
    for (int k = 0; k < kCollectiveKinds; ++k) {
      const auto kind = static_cast<CollectiveKind>(k);
      EXPECT_EQ(dry->Bytes(kind), measured.comm.Bytes(kind)) << plan.mesh.ToString();
    }
  }
}

// The dry run's one block standing for every device gives what holding each device's block gives:
// the same collectives, the same matmuls on the busiest device, the same FLOPs per device.
TEST_F(NumericCheckTest, DryRunOfOneBlockEqualsTheDryRunOfEveryDevice) {
  const ParamTree tree = LlamaTree(model_);
  for (const std::vector<int64_t>& sizes :
       std::vector<std::vector<int64_t>>{{1, 8, 1, 1, 1}, {2, 2, 1, 2, 1}, {1, 2, 1, 2, 2}, {1, 1, 1, 8, 1}}) {
    const planner::Plan plan = Plan(tree, kEasyDelAxes, sizes);
    model_.batch = std::max<int64_t>(2, sizes[0] * sizes[1]);
    auto every = DryRunForward(model_, plan, tree, {.per_device = true});
    auto one = DryRunForward(model_, plan, tree);
    ASSERT_TRUE(every.ok() && one.ok()) << one.status().ToString();
    ASSERT_EQ(one->comm.records.size(), every->comm.records.size()) << plan.mesh.ToString();
    for (size_t i = 0; i < every->comm.records.size(); ++i) {
      EXPECT_EQ(one->comm.records[i].op, every->comm.records[i].op);
      EXPECT_EQ(one->comm.records[i].bytes_per_device, every->comm.records[i].bytes_per_device);
    }
    ASSERT_EQ(one->matmuls.records.size(), every->matmuls.records.size());
    for (size_t i = 0; i < every->matmuls.records.size(); ++i) {
      EXPECT_EQ(one->matmuls.records[i].flops, every->matmuls.records[i].flops) << every->matmuls.records[i].op;
      EXPECT_EQ(one->matmuls.records[i].elements, every->matmuls.records[i].elements);
    }
    EXPECT_EQ(one->flops, every->flops) << plan.mesh.ToString();
  }
}

TEST_F(NumericCheckTest, DryRunOfOneLayerStandsForEveryRepeatedLayer) {
  model_.layers = 2;
  const ParamTree tree = LlamaTree(model_);
  const planner::Plan plan = Plan(tree, kEasyDelAxes, {1, 4, 1, 2, 1});
  model_.batch = 4;
  auto all = DryRunForward(model_, plan, tree, {.all_layers = true});
  auto one = DryRunForward(model_, plan, tree);
  ASSERT_TRUE(all.ok() && one.ok()) << one.status().ToString();
  EXPECT_EQ(one->layers_run, 1);
  EXPECT_EQ(one->repeats, 1);
  EXPECT_EQ(one->flops, all->flops);
  for (int k = 0; k < kCollectiveKinds; ++k) {
    EXPECT_EQ(one->Bytes(static_cast<CollectiveKind>(k)), all->Bytes(static_cast<CollectiveKind>(k)));
  }
  // Every device computes its share of the model's 2 x tokens x matmul parameters, and no less.
  int64_t matmul_params = model_.vocab * model_.hidden;  // lm_head
  matmul_params +=
      model_.layers * (model_.hidden * (model_.heads + 2 * model_.kv_heads) * model_.head_dim +
                       model_.heads * model_.head_dim * model_.hidden + 3 * model_.hidden * model_.intermediate);
  int64_t total = 0;
  for (int64_t f : all->flops) total += f;
  EXPECT_GE(total, 2 * model_.batch * model_.seq * matmul_params);
}

TEST_F(NumericCheckTest, KvCacheIsFilledInItsOwnLayoutAndMeasuredPerDevice) {
  // fsdp=2 x tp=2; the cache [B=4, T=8, kv=4, D=8] over (batch: fsdp, kv heads: tp), kvdtype 1 byte;
  // indexs/starts [B] int32 over fsdp.
  const ParamTree tree = LlamaTree(model_);
  const planner::Plan plan = Plan(tree, kEasyDelAxes, {1, 2, 1, 2, 1});
  const NumericReport plain = Run(plan, tree);
  EXPECT_EQ(plain.comparisons.size(), 4u);
  EXPECT_EQ(plain.measured_kv_cache, std::vector<int64_t>(4, 0));
  model_.cache_axes = std::vector<PartitionSpec::Entry>{{"fsdp"}, {}, {"tp"}, {}};
  model_.cache_index_axes = {{"fsdp"}};
  model_.cache_bytes_per_element = 1;
  const NumericReport r = Run(plan, tree);
  EXPECT_TRUE(r.ok());
  ASSERT_EQ(r.comparisons.size(), 4u + 2 * 2);  // k and v of both layers, compared with the reference
  EXPECT_EQ(r.comparisons[4].name, "cache 0 k");
  const int64_t per_layer = 2 * (4 * 8 * 4 * 8 / 4) * 1 + 2 * (4 / 2) * 4;
  EXPECT_EQ(r.measured_kv_cache, std::vector<int64_t>(4, 2 * per_layer));
  // Storing the cache in its own layout does not change what the layers compute.
  EXPECT_EQ(r.measured_residual, plain.measured_residual);
  // A replicated cache costs every device the whole cache.
  model_.cache_axes = std::vector<PartitionSpec::Entry>(4);
  model_.cache_index_axes = {{}};
  const NumericReport replicated = Run(plan, tree);
  EXPECT_EQ(replicated.measured_kv_cache, std::vector<int64_t>(4, 2 * (2 * 4 * 8 * 4 * 8 + 2 * 4 * 4)));
}

TEST_F(NumericCheckTest, MutationCorruptedShardValueIsCaught) {
  const ParamTree tree = LlamaTree(model_);
  const NumericReport r = Run(Plan(tree, kEasyDelAxes, {1, 4, 1, 2, 1}), tree, Injection::kCorruptShard);
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.shard_errors_total, 1);
  EXPECT_EQ(r.shard_errors[0].param, "model/embed_tokens/embedding");
  EXPECT_EQ(r.shard_errors[0].device, 7);
  EXPECT_EQ(r.shard_errors[0].index, (Dims{48, 16}));
}

TEST_F(NumericCheckTest, MutationSliceOffByOneBlockIsCaught) {
  const ParamTree tree = LlamaTree(model_);
  const NumericReport r = Run(Plan(tree, kEasyDelAxes, {1, 4, 1, 2, 1}), tree, Injection::kOffsetBlock);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.shard_errors[0].param, "model/embed_tokens/embedding");
  EXPECT_EQ(r.shard_errors[0].device, 0);
  EXPECT_EQ(r.shard_errors[0].index, (Dims{0, 0}));
  EXPECT_FALSE(r.comparisons[0].ok);  // the wrong rows reach the embedding output
}

TEST_F(NumericCheckTest, MutationMissingAllReduceIsCaught) {
  const ParamTree tree = LlamaTree(model_);
  const NumericReport r = Run(Plan(tree, kEasyDelAxes, {1, 4, 1, 2, 1}), tree, Injection::kDropAllReduce);
  EXPECT_EQ(r.shard_errors_total, 0);
  EXPECT_EQ(r.comm.dropped_all_reduces, 1);
  ASSERT_FALSE(r.ok());
  bool any_bad = false;
  for (const Comparison& c : r.comparisons) any_bad = any_bad || !c.ok;
  EXPECT_TRUE(any_bad);
}

TEST_F(NumericCheckTest, MutationSpecOnTheWrongDimIsCaught) {
  const ParamTree tree = LlamaTree(model_);
  const NumericReport r = Run(Plan(tree, kEasyDelAxes, {1, 4, 1, 2, 1}), tree, Injection::kWrongDim);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.shard_errors[0].param, "model/embed_tokens/embedding");
}

TEST_F(NumericCheckTest, MutationSwappedTupleAxisOrderIsCaught) {
  const ParamTree tree = LlamaTree(model_);
  const NumericReport r = Run(Plan(tree, kEasyDelAxes, {1, 2, 1, 2, 2}), tree, Injection::kSwapTupleOrder);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.shard_errors[0].param, "model/embed_tokens/embedding");
  EXPECT_EQ(r.shard_errors[0].device, 1);
}

TEST_F(NumericCheckTest, RefusesMeshesAboveTheLimit) {
  const ParamTree tree = LlamaTree(model_);
  auto r = RunNumericCheck(model_, Plan(tree, kEasyDelAxes, {1, 8, 1, 2, 1}), tree, NumericOptions{.max_devices = 8});
  ASSERT_FALSE(r.ok());
}

}  // namespace
}  // namespace easyplan::kernels
