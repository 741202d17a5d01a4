// The MoE specs (easydel/layers/moe/_moe_module.py, _communication_utils.py) as unit tests: the stacked
// expert kernels' module-view specs and the fused path's on the folded expert mesh.
#include "planner/expert_specs.h"

#include <gtest/gtest.h>

#include "planner/activations_test_util.h"

namespace easyplan::planner {
namespace {

using activations_testing::ActivationsTest;
using activations_testing::DP;
using activations_testing::N;
using activations_testing::TP;
using plan_testing::FiveAxisMesh;
using plan_testing::P;

// ---- Expert specs (easydel/layers/moe/_moe_module.py, _communication_utils.py) ------------------------

struct ExpertVariant {
  std::vector<std::string> sets;
  PartitionSpec column, row;
};

TEST_F(ActivationsTest, Section52ModuleViewSpecsEveryVariant) {
  const std::string moe = R"(, "num_local_experts": 8)";
  const ExpertVariant variants[] = {
      {{}, P({{"ep", "sp", "fsdp"}, N, TP}), P({{"ep", "sp", "fsdp"}, TP, N})},
      {{"fsdp_is_ep_bound=false"}, P({{"ep", "sp"}, N, TP}), P({{"ep", "sp"}, TP, N})},
      {{"sp_is_ep_bound=false"}, P({{"ep", "fsdp"}, N, TP}), P({{"ep", "fsdp"}, TP, N})},
      {{"fsdp_is_ep_bound=false", "sp_is_ep_bound=false"}, P({{"ep"}, N, TP}), P({{"ep"}, TP, N})},
      {{"use_expert_tensor_mode=true"}, P({TP, N, N}), P({TP, N, N})},
      {{"use_expert_tensor_mode=true", "fsdp_is_ep_bound=false"}, P({TP, N, N}), P({TP, N, N})},
  };
  for (const ExpertVariant& variant : variants) {
    const Json config = Config(variant.sets, moe);
    const ExpertMesh expert =
        FoldExpertMesh(FiveAxisMesh(1, 2, 2, 1, 2), ParallelAxisNamesOf(config), ExpertBindingOf(config));
    auto specs = GetExpertSpecs(table_, *presets_, config, DimsOf(config).experts, expert);
    ASSERT_TRUE(specs.ok()) << specs.status().ToString();
    ASSERT_TRUE(specs->has_value());
    EXPECT_EQ((*specs)->experts, 8);
    EXPECT_EQ((*specs)->column, variant.column);
    EXPECT_EQ((*specs)->row, variant.row);
    if ((*specs)->expert_tensor_mode) {
      EXPECT_EQ((*specs)->bias, P({TP, N}));
    } else {
      EXPECT_EQ((*specs)->bias, P({variant.column[0], TP}));
    }
  }
}

TEST_F(ActivationsTest, Section52FusedPathOnTheExpertMesh) {
  const Json standard = Config({}, R"(, "num_local_experts": 8)");
  const ExpertMesh expert = FoldExpertMesh(FiveAxisMesh(2, 2, 2, 2, 1), ParallelAxisNames{}, ExpertBinding{});
  auto specs = GetExpertSpecs(table_, *presets_, standard, DimsOf(standard).experts, expert);
  ASSERT_TRUE(specs.ok() && specs->has_value());
  const std::vector<std::pair<std::string, PartitionSpec>> expected = {
      {"hidden_in", P({DP, N, N})},      {"router_probs", P({DP, N})}, {"wi_wu_kernel", P({{"ep"}, N, TP})},
      {"wd_kernel", P({{"ep"}, TP, N})}, {"bias", P({{"ep"}, TP})},    {"output", P({DP, N, TP})},
  };
  EXPECT_EQ((*specs)->fused, expected);
  EXPECT_EQ((*specs)->model_output, P({DP, N, TP}));

  const Json etm = Config({"use_expert_tensor_mode=true"}, R"(, "num_local_experts": 8)");
  auto etm_specs = GetExpertSpecs(table_, *presets_, etm, DimsOf(etm).experts, expert);
  ASSERT_TRUE(etm_specs.ok() && etm_specs->has_value());
  const std::vector<std::pair<std::string, PartitionSpec>> etm_expected = {
      {"hidden_in", P({DP, N, N})}, {"router_probs", P({DP, N})}, {"wi_wu_kernel", P({TP, N, N})},
      {"wd_kernel", P({TP, N, N})}, {"bias", P({TP, N})},         {"output", P({DP, N, N})},
  };
  EXPECT_EQ((*etm_specs)->fused, etm_expected);
  EXPECT_EQ((*etm_specs)->model_output, P({DP, N, N}));
  // Expert-tensor mode with tp = 2 on the expert mesh: EasyDeL raises ValueError.
  const std::vector<Finding> findings = ExpertMeshFindings(expert, *etm_specs);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].code, FindingCode::kExpertMesh);
  EXPECT_EQ(findings[0].message,
            "expert_mesh: use_expert_tensor_mode needs the expert mesh's tp size to be 1, but it is 2 (dp=2, ep=4, "
            "tp=2); EasyDeL raises ValueError");
}

TEST_F(ActivationsTest, Section52FusedSpecsUseRenamedExpertMeshAxes) {
  const Json config = Config({"partition_axis.data_parallel_axis=data", "partition_axis.expert_parallel_axis=expert",
                              "partition_axis.tensor_parallel_axis=model", "partition_axis.sequence_parallel_axis=seq"},
                             R"(, "num_local_experts": 8)");
  Mesh mesh;
  mesh.axis_names = {"data", "fsdp", "expert", "model", "seq"};
  mesh.shape = {1, 2, 2, 2, 1};
  const ExpertMesh expert = FoldExpertMesh(mesh, ParallelAxisNamesOf(config), ExpertBindingOf(config));
  EXPECT_EQ(expert.ToString(), "data=1, expert=4, model=2");
  auto specs = GetExpertSpecs(table_, *presets_, config, DimsOf(config).experts, expert);
  ASSERT_TRUE(specs.ok() && specs->has_value());
  EXPECT_EQ((*specs)->fused[2].second, P({{"expert"}, N, {"model"}}));
  EXPECT_EQ((*specs)->column, P({{"expert", "seq", "fsdp"}, N, {"model"}}));
  EXPECT_EQ((*specs)->model_output, P({{"data"}, N, {"model"}}));
}

TEST_F(ActivationsTest, DenseConfigsHaveNoExpertSpecsAndExpertsMustSplitEvenly) {
  auto dense = GetExpertSpecs(table_, *presets_, Config(), 0, ExpertMesh{});
  ASSERT_TRUE(dense.ok());
  EXPECT_FALSE(dense->has_value());
  const Json config = Config({}, R"(, "num_local_experts": 6)");
  const ExpertMesh expert = FoldExpertMesh(FiveAxisMesh(1, 2, 2, 1, 1), ParallelAxisNames{}, ExpertBinding{});
  auto specs = GetExpertSpecs(table_, *presets_, config, DimsOf(config).experts, expert);
  const std::vector<Finding> findings = ExpertMeshFindings(expert, *specs);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(
      findings[0].message,
      "expert_mesh: 6 experts cannot be dealt to the folded ep axis of size 4 (from ep x fsdp x sp); the fused MoE "
      "shard_map needs an even split");
  EXPECT_EQ(findings[0].notes, (std::vector<std::string>{"valid folded sizes: 1, 2, 3, 6"}));
}

}  // namespace
}  // namespace easyplan::planner
