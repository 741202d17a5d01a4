// MatchTree once, LayOutPlan per mesh: the same plans as BuildPlan on each mesh, and one TreeMatches
// shared by threads.
#include "planner/lay_out_plan.h"

#include <gtest/gtest.h>

#include <thread>

#include "planner/plan_test_util.h"
#include "planner/tree_matches.h"

namespace easyplan::planner {
namespace {

using plan_testing::ExampleModel;
using plan_testing::ExpectSamePlan;
using plan_testing::FiveAxisMesh;
using plan_testing::LoadExampleModel;

MatchRequest MatchRequestOf(const ExampleModel& model) {
  return MatchRequest{.tree = &model.tree,
                      .rules = model.rules,
                      .presets = model.presets,
                      .config = &model.resolved.config,
                      .links = &model.links,
                      .logical_dims = model.logical_dims};
}

// Even and uneven meshes, with and without experts split, a duplicate-free size-3 axis (indivisible
// dims) and one device.
std::vector<Mesh> Meshes() {
  return {FiveAxisMesh(1, 8, 1, 1, 1), FiveAxisMesh(1, 2, 2, 2, 1), FiveAxisMesh(2, 1, 1, 4, 1),
          FiveAxisMesh(1, 1, 8, 1, 1), FiveAxisMesh(1, 3, 1, 1, 1), FiveAxisMesh(1, 4, 1, 2, 2),
          FiveAxisMesh(1, 1, 1, 1, 1), FiveAxisMesh(1, 6, 1, 5, 1)};
}

void ExpectMatchOnceEqualsBuildPlan(const std::string& name, Layout layout) {
  std::unique_ptr<ExampleModel> model = LoadExampleModel(name, layout);
  auto matches = MatchTree(MatchRequestOf(*model));
  ASSERT_TRUE(matches.ok()) << matches.status().ToString();
  for (UnevenMode uneven : {UnevenMode::kReplicate, UnevenMode::kError, UnevenMode::kChunk}) {
    for (const Mesh& mesh : Meshes()) {
      SCOPED_TRACE(mesh.ToString() + " uneven " + std::string(UnevenModeName(uneven)));
      auto built = BuildPlan(model->Request(mesh, uneven));
      auto laid_out = LayOutPlan(*matches, mesh, uneven);
      ASSERT_TRUE(built.ok()) << built.status().ToString();
      ASSERT_TRUE(laid_out.ok()) << laid_out.status().ToString();
      ExpectSamePlan(*laid_out, *built);
    }
  }
}

TEST(LayOutPlanTest, MatchingOnceAndLayingOutPerMeshEqualsBuildPlanOnEachMesh) {
  ExpectMatchOnceEqualsBuildPlan("llama-3.1-8b", Layout::kEasyDel);
}

TEST(LayOutPlanTest, HfTreesWithLinksToEasyDelRulesPlanAlikeEitherWay) {
  ExpectMatchOnceEqualsBuildPlan("llama-3.1-8b", Layout::kHf);
}

TEST(LayOutPlanTest, PerExpertTensorsPlanAlikeEitherWay) {
  ExpectMatchOnceEqualsBuildPlan("mixtral-8x7b", Layout::kHf);
  ExpectMatchOnceEqualsBuildPlan("qwen3-30b-a3b", Layout::kEasyDel);
}

TEST(LayOutPlanTest, RepeatedLayersShareKindsAndRuleCountsCoverEveryTensor) {
  std::unique_ptr<ExampleModel> model = LoadExampleModel("llama-3.1-8b", Layout::kEasyDel);
  auto matches = MatchTree(MatchRequestOf(*model));
  ASSERT_TRUE(matches.ok()) << matches.status().ToString();
  // 32 layers of 9 tensors and 3 outside them. Layers 0-9 share one number shape ("layers/0/"),
  // layers 10-31 another ("layers/00/"): 2 x 9 + 3 kinds.
  EXPECT_EQ(model->tree.tensors.size(), 291u);
  EXPECT_EQ(matches->kinds().size(), 21u);
  int64_t tensors = 0;
  for (const TensorKind& kind : matches->kinds()) tensors += kind.tensors;
  EXPECT_EQ(tensors, 291);
  int64_t hits = 0;
  for (int64_t count : matches->rule_hits()) hits += count;
  EXPECT_EQ(hits, 291);
  // Without merging, every tensor is its own kind and the plan is the same.
  MatchRequest unmerged = MatchRequestOf(*model);
  unmerged.replay_outcomes = false;
  auto each = MatchTree(unmerged);
  ASSERT_TRUE(each.ok());
  EXPECT_EQ(each->kinds().size(), 291u);
  const Mesh mesh = FiveAxisMesh(1, 4, 1, 2, 1);
  auto merged_plan = LayOutPlan(*matches, mesh, UnevenMode::kReplicate);
  auto each_plan = LayOutPlan(*each, mesh, UnevenMode::kReplicate);
  ASSERT_TRUE(merged_plan.ok() && each_plan.ok());
  ExpectSamePlan(*merged_plan, *each_plan);
}

TEST(LayOutPlanTest, AMeshAboveTheDeviceLimitIsBadInput) {
  std::unique_ptr<ExampleModel> model = LoadExampleModel("llama-3.1-8b", Layout::kEasyDel);
  auto matches = MatchTree(MatchRequestOf(*model));
  ASSERT_TRUE(matches.ok());
  auto plan = LayOutPlan(*matches, FiveAxisMesh(1, 16, 1, 1, 1), UnevenMode::kReplicate, {.max_devices = 8});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().diag().message, "the mesh has 16 devices, more than the limit of 8 (raise --max-devices)");
}

TEST(LayOutPlanTest, OneTreeMatchesServesManyThreadsAtOnce) {
  std::unique_ptr<ExampleModel> model = LoadExampleModel("mixtral-8x7b", Layout::kHf);
  auto matches = MatchTree(MatchRequestOf(*model));
  ASSERT_TRUE(matches.ok()) << matches.status().ToString();
  const std::vector<Mesh> meshes = Meshes();
  std::vector<Plan> expected;
  for (const Mesh& mesh : meshes) {
    auto plan = BuildPlan(model->Request(mesh));
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    expected.push_back(std::move(*plan));
  }
  // Every thread lays out every mesh, starting at a different one, several times over.
  constexpr int kThreads = 4;
  constexpr int kRounds = 3;
  std::vector<std::vector<StatusOr<Plan>>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        for (size_t m = 0; m < meshes.size(); ++m) {
          const Mesh& mesh = meshes[(m + static_cast<size_t>(t)) % meshes.size()];
          results[static_cast<size_t>(t)].push_back(LayOutPlan(*matches, mesh, UnevenMode::kReplicate));
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(results[static_cast<size_t>(t)].size(), kRounds * meshes.size());
    for (size_t i = 0; i < results[static_cast<size_t>(t)].size(); ++i) {
      SCOPED_TRACE("thread " + std::to_string(t) + " plan " + std::to_string(i));
      const StatusOr<Plan>& plan = results[static_cast<size_t>(t)][i];
      ASSERT_TRUE(plan.ok()) << plan.status().ToString();
      ExpectSamePlan(*plan, expected[(i % meshes.size() + static_cast<size_t>(t)) % meshes.size()]);
    }
  }
}

}  // namespace
}  // namespace easyplan::planner
