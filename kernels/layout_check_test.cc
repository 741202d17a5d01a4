#include "kernels/layout_check.h"

#include <gtest/gtest.h>

#include "planner/spec_test_util.h"

namespace easyplan::kernels {
namespace {

using planner::plan_testing::MakeMesh;

using planner::TensorLayout;
using planner::UnevenMode;

// A plan with one group per (shape, spec), laid out by the planner's own TensorLayout.
struct TestPlan {
  ParamTree tree;
  planner::Plan plan;

  void Add(const std::string& name, Shape shape, PartitionSpec spec) {
    const int index = static_cast<int>(tree.tensors.size());
    tree.tensors.push_back(TensorEntry{name, shape, DType::kBFloat16});
    auto layout = TensorLayout::Make(shape, spec, plan.mesh, plan.uneven);
    ASSERT_TRUE(layout.ok()) << layout.status().ToString();
    planner::LayoutGroup group{.layout = *layout, .bits = 16};
    group.tensors = 1;
    plan.groups.push_back(std::move(group));
    planner::ParamPlan p;
    p.tensor = index;
    p.spec = spec;
    p.effective = spec;
    p.group = index;
    plan.params.push_back(std::move(p));
  }
};

TestPlan LlamaLikePlan(UnevenMode uneven = UnevenMode::kReplicate) {
  TestPlan t;
  t.plan.mesh = MakeMesh({"dp", "fsdp", "tp", "sp"}, {2, 2, 2, 2});
  t.plan.uneven = uneven;
  t.Add("q_proj/kernel", Shape{64, 128}, PartitionSpec({{"fsdp", "sp"}, {"tp"}}));
  t.Add("o_proj/kernel", Shape{128, 64}, PartitionSpec({{"tp"}, {"fsdp", "sp"}}));
  t.Add("norm/kernel", Shape{64}, PartitionSpec());
  return t;
}

TEST(LayoutCheckTest, AValidPlanTilesEveryTensor) {
  TestPlan t = LlamaLikePlan();
  const LayoutCheckResult r = CheckLayouts(t.plan, t.tree, {});
  EXPECT_TRUE(r.ok()) << r.errors[0].message;
  EXPECT_EQ(r.groups, 3);
  EXPECT_EQ(r.devices, 16);
}

TEST(LayoutCheckTest, UnevenChunkLayoutsTileWithEmptyShards) {
  TestPlan t;
  t.plan.mesh = MakeMesh({"fsdp", "tp"}, {4, 2});
  t.plan.uneven = UnevenMode::kChunk;
  t.Add("odd", Shape{5, 3}, PartitionSpec({{"fsdp"}, {"tp"}}));  // chunks 2,2,1,0 and 2,1
  const LayoutCheckResult r = CheckLayouts(t.plan, t.tree, {});
  EXPECT_TRUE(r.ok()) << r.errors[0].message;
}

TEST(LayoutCheckTest, ATensorWithAZeroDimHasNothingToTile) {
  // Found by fuzz_tree_plan: a --tree tensor of shape [0] failed `check --level layout` with "slice #0 is
  // held by 0 devices", sharded or replicated.
  TestPlan t;
  t.plan.mesh = MakeMesh({"fsdp", "tp"}, {2, 4});
  t.Add("bias", Shape{0}, PartitionSpec({{"tp"}}));
  t.Add("empty_kernel", Shape{0, 8}, PartitionSpec({{"fsdp"}, {"tp"}}));
  t.Add("replicated", Shape{3, 0}, PartitionSpec());
  const LayoutCheckResult r = CheckLayouts(t.plan, t.tree, {});
  EXPECT_TRUE(r.ok()) << r.errors[0].message;
  EXPECT_EQ(r.groups, 3);
}

TEST(LayoutCheckTest, ASliceOneBlockOffIsCaught) {
  TestPlan t = LlamaLikePlan();
  const LayoutCheckResult r = CheckLayouts(t.plan, t.tree, {.injection = Injection::kOffsetBlock});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors[0].param, "q_proj/kernel");
  EXPECT_EQ(r.errors[0].device, 0);
  EXPECT_EQ(r.errors[0].message, "device 0 holds [16:32, 0:64] but P(('fsdp', 'sp'), 'tp') places [0:16, 0:64] there");
}

TEST(LayoutCheckTest, SwappedTupleAxisOrderIsCaught) {
  TestPlan t = LlamaLikePlan();
  const LayoutCheckResult r = CheckLayouts(t.plan, t.tree, {.injection = Injection::kSwapTupleOrder});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors[0].param, "q_proj/kernel");
  // Device 1 is sp=1: block 1 under ('fsdp', 'sp'), block 2 under ('sp', 'fsdp').
  EXPECT_EQ(r.errors[0].device, 1);
}

TEST(LayoutCheckTest, ASpecOnTheWrongDimIsCaught) {
  TestPlan t = LlamaLikePlan();
  const LayoutCheckResult r = CheckLayouts(t.plan, t.tree, {.injection = Injection::kWrongDim});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors[0].param, "q_proj/kernel");
}

TEST(LayoutCheckTest, AGroupWhoseShapeDiffersFromTheTensorIsCaught) {
  TestPlan t = LlamaLikePlan();
  t.tree.tensors[2].shape = Shape{65};
  const LayoutCheckResult r = CheckLayouts(t.plan, t.tree, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors[0].message, "the tensor has shape [65] but its layout group is for [64]");
}

}  // namespace
}  // namespace easyplan::kernels
