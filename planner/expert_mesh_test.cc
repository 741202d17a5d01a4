#include "planner/expert_mesh.h"

#include <gtest/gtest.h>

#include "planner/spec_test_util.h"

namespace easyplan::planner {
namespace {

using plan_testing::FiveAxisMesh;

struct FoldCase {
  std::array<int64_t, 5> mesh;  // dp, fsdp, ep, tp, sp
  bool fsdp_bound;
  bool sp_bound;
  std::array<int64_t, 3> folded;  // dp, ep, tp
};

// gtest prints a parameter with this in test names, instead of its raw bytes.
void PrintTo(const FoldCase& c, std::ostream* os) {
  *os << "mesh " << c.mesh[0] << "," << c.mesh[1] << "," << c.mesh[2] << "," << c.mesh[3] << "," << c.mesh[4]
      << (c.fsdp_bound ? " fsdp-bound" : "") << (c.sp_bound ? " sp-bound" : "");
}

// EasyDeL's _mesh_shape_ep (easydel/infra/base_config.py) on every row x every (fsdp_is_ep_bound,
// sp_is_ep_bound) column.
const FoldCase kFoldTable[] = {
    {{1, 1, 2, 2, 1}, true, true, {1, 2, 2}},  {{1, 1, 2, 2, 1}, false, true, {1, 2, 2}},
    {{1, 1, 2, 2, 1}, true, false, {1, 2, 2}}, {{1, 1, 2, 2, 1}, false, false, {1, 2, 2}},
    {{2, 2, 1, 2, 1}, true, true, {2, 2, 2}},  {{2, 2, 1, 2, 1}, false, true, {4, 1, 2}},
    {{2, 2, 1, 2, 1}, true, false, {2, 2, 2}}, {{2, 2, 1, 2, 1}, false, false, {4, 1, 2}},
    {{1, 4, 2, 1, 2}, true, true, {1, 16, 1}}, {{1, 4, 2, 1, 2}, false, true, {4, 4, 1}},
    {{1, 4, 2, 1, 2}, true, false, {2, 8, 1}}, {{1, 4, 2, 1, 2}, false, false, {8, 2, 1}},
    {{2, 2, 2, 2, 1}, true, true, {2, 4, 2}},  {{2, 2, 2, 2, 1}, false, true, {4, 2, 2}},
    {{2, 2, 2, 2, 1}, true, false, {2, 4, 2}}, {{2, 2, 2, 2, 1}, false, false, {4, 2, 2}},
    {{1, 8, 1, 1, 1}, true, true, {1, 8, 1}},  {{1, 8, 1, 1, 1}, false, true, {8, 1, 1}},
    {{1, 8, 1, 1, 1}, true, false, {1, 8, 1}}, {{1, 8, 1, 1, 1}, false, false, {8, 1, 1}},
    {{1, 2, 1, 2, 2}, true, true, {1, 4, 2}},  {{1, 2, 1, 2, 2}, false, true, {2, 2, 2}},
    {{1, 2, 1, 2, 2}, true, false, {2, 2, 2}}, {{1, 2, 1, 2, 2}, false, false, {4, 1, 2}},
};

class FoldTableTest : public ::testing::TestWithParam<FoldCase> {};

TEST_P(FoldTableTest, MatchesEasyDeL) {
  const FoldCase& c = GetParam();
  const Mesh mesh = FiveAxisMesh(c.mesh[0], c.mesh[1], c.mesh[2], c.mesh[3], c.mesh[4]);
  const ExpertMesh expert = FoldExpertMesh(mesh, ParallelAxisNames{}, ExpertBinding{c.fsdp_bound, c.sp_bound});
  EXPECT_EQ(expert.shape, c.folded);
  EXPECT_EQ(expert.axis_names, (std::array<std::string, 3>{"dp", "ep", "tp"}));
  EXPECT_TRUE(expert.Covers());
}

INSTANTIATE_TEST_SUITE_P(Section51, FoldTableTest, ::testing::ValuesIn(kFoldTable));

TEST(ExpertMeshTest, MembersFollowTheAssignmentOrder) {
  const ExpertMesh expert =
      FoldExpertMesh(FiveAxisMesh(1, 4, 2, 1, 2), ParallelAxisNames{}, ExpertBinding{true, false});
  EXPECT_EQ(expert.members[ExpertMesh::kTp], (std::vector<std::string>{"tp"}));
  EXPECT_EQ(expert.members[ExpertMesh::kEp], (std::vector<std::string>{"ep", "fsdp"}));
  EXPECT_EQ(expert.members[ExpertMesh::kDp], (std::vector<std::string>{"dp", "sp"}));
  EXPECT_EQ(expert.ToString(), "dp=2, ep=8, tp=1");
}

TEST(ExpertMeshTest, RenamedAxesNameTheExpertMesh) {
  Mesh mesh;
  mesh.axis_names = {"data", "fsdp", "expert", "model", "seq"};
  mesh.shape = {2, 2, 1, 2, 1};
  const ParallelAxisNames names{"data", "fsdp", "expert", "model", "seq"};
  const ExpertMesh expert = FoldExpertMesh(mesh, names, ExpertBinding{});
  EXPECT_EQ(expert.axis_names, (std::array<std::string, 3>{"data", "expert", "model"}));
  EXPECT_EQ(expert.shape, (std::array<int64_t, 3>{2, 2, 2}));
  EXPECT_EQ(expert.ToString(), "data=2, expert=2, model=2");
}

TEST(ExpertMeshTest, RenamedAxesOfAConfigPartitionAxis) {
  const Json config = Json::parse(R"({"partition_axis": {"data_parallel_axis": "data",
      "expert_parallel_axis": "expert", "tensor_parallel_axis": "model", "sequence_parallel_axis": "seq"},
      "fsdp_is_ep_bound": false})");
  const ParallelAxisNames names = ParallelAxisNamesOf(config);
  EXPECT_EQ(names.dp, "data");
  EXPECT_EQ(names.fsdp, "fsdp");
  EXPECT_EQ(names.ep, "expert");
  EXPECT_EQ(names.tp, "model");
  EXPECT_EQ(names.sp, "seq");
  const ExpertBinding binding = ExpertBindingOf(config);
  EXPECT_FALSE(binding.fsdp_is_ep_bound);
  EXPECT_TRUE(binding.sp_is_ep_bound);
}

TEST(ExpertMeshTest, ANameSharedByThreeRolesIsCountedOnce) {
  // easydel/infra/base_config.py _mesh_shape_ep: {ep: 2, tp: 2, sp: 1} with dp = fsdp = ep = "ep" folds to (1, 2, 2)
  // with names ("ep", "ep", "tp") at ED-HEAD (ED-c14 multiplied without de-duplication).
  Mesh mesh;
  mesh.axis_names = {"ep", "tp", "sp"};
  mesh.shape = {2, 2, 1};
  const ParallelAxisNames names{"ep", "ep", "ep", "tp", "sp"};
  const ExpertMesh expert = FoldExpertMesh(mesh, names, ExpertBinding{});
  EXPECT_EQ(expert.shape, (std::array<int64_t, 3>{1, 2, 2}));
  EXPECT_EQ(expert.axis_names, (std::array<std::string, 3>{"ep", "ep", "tp"}));
  EXPECT_TRUE(expert.Covers());
}

TEST(ExpertMeshTest, MissingAxesCountAsOneAndForeignAxesBreakTheReshape) {
  Mesh mesh;
  mesh.axis_names = {"fsdp", "tp", "pp"};
  mesh.shape = {4, 2, 2};
  const ExpertMesh expert = FoldExpertMesh(mesh, ParallelAxisNames{}, ExpertBinding{});
  EXPECT_EQ(expert.shape, (std::array<int64_t, 3>{1, 4, 2}));
  EXPECT_FALSE(expert.Covers());  // pp is in no group: 8 expert-mesh devices for 16
}

TEST(ExpertMeshTest, DeviceGridIsARowMajorReshape) {
  // expert_mesh (easydel/infra/base_config.py): the expert "tp" pairs are consecutive flat ids, sp neighbours in the
  // 5-D mesh.
  const Mesh mesh = FiveAxisMesh(1, 2, 1, 2, 2);
  const ExpertMesh expert = FoldExpertMesh(mesh, ParallelAxisNames{}, ExpertBinding{});
  ASSERT_EQ(expert.shape, (std::array<int64_t, 3>{1, 4, 2}));
  std::vector<std::vector<int64_t>> grid;
  for (int64_t ep = 0; ep < 4; ++ep) grid.push_back({expert.DeviceAt(0, ep, 0), expert.DeviceAt(0, ep, 1)});
  EXPECT_EQ(grid, (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  // Device 0's real tp partner in the 5-D mesh is device 2 (tp is the second-to-last axis).
  EXPECT_EQ(mesh.Coordinates(2), (std::vector<int64_t>{0, 0, 0, 1, 0}));
}

}  // namespace
}  // namespace easyplan::planner
