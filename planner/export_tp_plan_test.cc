#include "planner/export_tp_plan.h"

#include <gtest/gtest.h>

#include "planner/spec_test_util.h"

namespace easyplan::planner {
namespace {

using plan_testing::FiveAxisMesh;
using plan_testing::kNone;
using plan_testing::P;

using Entry = PartitionSpec::Entry;
using Styles = std::vector<std::pair<std::string, std::string>>;

// fsdp=2, tp=2 over EasyDeL's five axes.
Mesh TpPlanMesh() { return FiveAxisMesh(1, 2, 1, 2, 1); }

// Plan-key vectors of transformers' replace_layer_number_by_wildcard (src/transformers/integrations/
// tensor_parallel.py, the current regex).
TEST(ExportTpPlanTest, LayerNumbersBecomeWildcards) {
  EXPECT_EQ(ReplaceLayerNumberByWildcard("model.layers.0.self_attn.q_proj.weight"),
            "model.layers.*.self_attn.q_proj.weight");
  EXPECT_EQ(ReplaceLayerNumberByWildcard("model.layers.12.mlp.experts.3.w1.weight"),
            "model.layers.*.mlp.experts.*.w1.weight");
  EXPECT_EQ(ReplaceLayerNumberByWildcard("a.0.1.b"), "a.*.1.b");
  EXPECT_EQ(ReplaceLayerNumberByWildcard("model.layers.7"), "model.layers.*");
  EXPECT_EQ(ReplaceLayerNumberByWildcard("lm_head.weight"), "lm_head.weight");
}

TEST(ExportTpPlanTest, StylesFromWhereTpShards) {
  std::vector<TpTensor> tensors;
  for (int layer = 0; layer < 2; ++layer) {
    const std::string p = "model.layers." + std::to_string(layer) + ".";
    tensors.push_back({p + "self_attn.q_proj.weight", {64, 64}, PartitionSpec({{"tp"}, {"fsdp", "sp"}})});
    tensors.push_back({p + "self_attn.q_proj.bias", {64}, PartitionSpec({{"tp"}})});
    tensors.push_back({p + "self_attn.k_proj.weight", {32, 64}, PartitionSpec({{"tp"}, {"fsdp"}})});
    tensors.push_back({p + "self_attn.k_proj.bias", {32}, PartitionSpec()});  // replicated: mismatch
    tensors.push_back({p + "self_attn.o_proj.weight", {64, 64}, PartitionSpec({{"fsdp"}, {"tp"}})});
    tensors.push_back({p + "input_layernorm.weight", {64}, PartitionSpec({kNone})});
    tensors.push_back({p + "mlp.up_proj.weight", {96, 64}, PartitionSpec({{"fsdp", "tp"}, kNone})});
  }
  tensors.push_back({"model.embed_tokens.weight", {128, 64}, PartitionSpec({{"tp"}, {"fsdp"}})});
  tensors.push_back({"model.norm.weight", {64}, PartitionSpec({{"tp"}})});
  tensors.push_back({"lm_head.weight", {128, 64}, PartitionSpec({{"tp"}, {"fsdp"}})});

  const TpPlanExport plan = DeriveTpPlan(tensors, TpPlanMesh(), "tp");
  EXPECT_EQ(plan.tp_size, 2);
  EXPECT_EQ(plan.base_model_tp_plan, (Styles{{"layers.*.self_attn.q_proj", "colwise"},
                                             {"layers.*.self_attn.k_proj", "colwise"},
                                             {"layers.*.self_attn.o_proj", "rowwise"},
                                             {"embed_tokens", "embedding_rowwise"}}));
  EXPECT_EQ(plan.tp_plan.back(), (std::pair<std::string, std::string>{"lm_head", "colwise_rep"}));
  ASSERT_EQ(plan.unmapped.size(), 3u);
  EXPECT_EQ(plan.unmapped[0].name, "model.layers.*.mlp.up_proj.weight");
  EXPECT_EQ(plan.unmapped[0].tensors, 2);
  EXPECT_EQ(plan.unmapped[0].reason,
            "dim 0 is sharded by ('fsdp', 'tp') with 'fsdp' major, so a tp rank's slice is not one contiguous block "
            "as transformers' styles cut it");
  EXPECT_EQ(plan.unmapped[1].name, "model.norm.weight");
  EXPECT_EQ(plan.unmapped[2].name, "model.layers.*.self_attn.k_proj.bias");
  EXPECT_EQ(plan.unmapped[2].reason,
            "'colwise' shards the bias along with the weight, but the plan replicates the bias over tp");
  ASSERT_FALSE(plan.other_axes.empty());
  EXPECT_EQ(plan.other_axes[0].name, "model.layers.*.self_attn.q_proj.weight");
  EXPECT_EQ(plan.other_axes[0].axes, (std::vector<std::string>{"fsdp"}));
  EXPECT_EQ(plan.other_axes[0].tensors, 2);
}

TEST(ExportTpPlanTest, ColwiseWithoutRowwiseSiblingGathersItsOutput) {
  const std::vector<TpTensor> tensors = {
      {"model.layers.0.block_sparse_moe.gate.weight", {4, 64}, P({{"tp"}, {"fsdp"}})},
      {"model.layers.0.block_sparse_moe.experts.0.w1.weight", {96, 64}, P({{"tp"}, kNone})},
      {"model.layers.0.block_sparse_moe.experts.0.w2.weight", {64, 96}, P({kNone, {"tp"}})},
      {"model.embed_tokens.weight", {128, 64}, P({kNone, {"tp"}})},
      {"model.layers.2.self_attn.q_proj.weight", {64, 64}, P({kNone}), /*in_model=*/false},
  };
  const TpPlanExport plan = DeriveTpPlan(tensors, TpPlanMesh(), "tp");
  EXPECT_EQ(plan.tp_plan, (Styles{{"model.layers.*.block_sparse_moe.gate", "colwise_rep"},
                                  {"model.layers.*.block_sparse_moe.experts.*.w1", "colwise"},
                                  {"model.layers.*.block_sparse_moe.experts.*.w2", "rowwise"},
                                  {"model.embed_tokens", "colwise_rep"}}));
  ASSERT_EQ(plan.unmapped.size(), 1u);
  EXPECT_EQ(plan.unmapped[0].name, "model.layers.*.self_attn.q_proj.weight");
}

TEST(ExportTpPlanTest, LayersThatDisagreeGetNoKey) {
  const std::vector<TpTensor> tensors = {
      {"model.layers.0.mlp.down_proj.weight", {64, 96}, PartitionSpec({kNone, {"tp"}})},
      {"model.layers.1.mlp.down_proj.weight", {64, 96}, PartitionSpec({{"tp"}, kNone})},
  };
  const TpPlanExport plan = DeriveTpPlan(tensors, TpPlanMesh(), "tp");
  EXPECT_TRUE(plan.tp_plan.empty());
  ASSERT_EQ(plan.unmapped.size(), 1u);
  EXPECT_EQ(plan.unmapped[0].tensors, 2);
  EXPECT_EQ(plan.unmapped[0].reason,
            "modules matching 'model.layers.*.mlp.down_proj' need different styles (rowwise, colwise_rep); one key "
            "cannot say that");
}

TEST(ExportTpPlanTest, NoTensorParallelAxisGivesAnEmptyPlan) {
  Mesh mesh = TpPlanMesh();
  mesh.shape = {1, 4, 1, 1, 1};
  const TpPlanExport plan =
      DeriveTpPlan({{"model.layers.0.mlp.down_proj.weight", {64, 96}, PartitionSpec({{"fsdp"}, {"tp"}})}}, mesh, "tp");
  EXPECT_EQ(plan.tp_size, 1);
  EXPECT_TRUE(plan.tp_plan.empty());
  EXPECT_TRUE(plan.unmapped.empty());
  EXPECT_EQ(plan.other_axes.size(), 1u);
}

}  // namespace
}  // namespace easyplan::planner
