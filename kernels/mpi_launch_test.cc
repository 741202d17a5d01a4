#include "kernels/mpi_launch.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace easyplan::kernels {
namespace {

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

Mesh MeshOf(std::vector<int64_t> shape) {
  Mesh mesh;
  for (size_t k = 0; k < shape.size(); ++k) mesh.axis_names.push_back("a" + std::to_string(k));
  mesh.shape = std::move(shape);
  return mesh;
}

TEST(ReadMpiLaunchTest, NoLauncherVariablesMeansNotUnderMpirun) {
  const auto launch = ReadMpiLaunch(Env({}));
  ASSERT_TRUE(launch.ok());
  EXPECT_FALSE(launch->has_value());
}

TEST(ReadMpiLaunchTest, ReadsOpenMpiAndHydraVariables) {
  auto open_mpi = ReadMpiLaunch(Env({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "8"}}));
  ASSERT_TRUE(open_mpi.ok() && open_mpi->has_value());
  EXPECT_EQ((*open_mpi)->rank, 3);
  EXPECT_EQ((*open_mpi)->size, 8);
  EXPECT_EQ((*open_mpi)->launcher, "Open MPI");
  auto hydra = ReadMpiLaunch(Env({{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}}));
  ASSERT_TRUE(hydra.ok() && hydra->has_value());
  EXPECT_EQ((*hydra)->launcher, "MPICH (Hydra)");
}

TEST(ReadMpiLaunchTest, MalformedVariablesAreBadInputNamingTheVariable) {
  for (const auto& [rank, size, what] :
       std::vector<std::tuple<std::string, std::string, std::string>>{{"8", "8", "OMPI_COMM_WORLD_RANK is '8'"},
                                                                      {"-1", "8", "OMPI_COMM_WORLD_RANK is '-1'"},
                                                                      {"0", "0", "OMPI_COMM_WORLD_SIZE is '0'"},
                                                                      {"0", "8x", "OMPI_COMM_WORLD_SIZE is '8x'"},
                                                                      {" 1", "8", "OMPI_COMM_WORLD_RANK is ' 1'"},
                                                                      {"0", "99999999", "OMPI_COMM_WORLD_SIZE"}}) {
    const auto launch = ReadMpiLaunch(Env({{"OMPI_COMM_WORLD_RANK", rank}, {"OMPI_COMM_WORLD_SIZE", size}}));
    ASSERT_FALSE(launch.ok()) << rank << " " << size;
    EXPECT_EQ(launch.status().kind(), ErrorKind::kBadInput);
    EXPECT_NE(launch.status().ToString().find(what), std::string::npos) << launch.status().ToString();
  }
  EXPECT_FALSE(ReadMpiLaunch(Env({{"OMPI_COMM_WORLD_RANK", "1"}})).ok());
}

TEST(RankDevicesTest, BlocksTileTheDevicesInOrder) {
  const Mesh mesh = MeshOf({1, 2, 1, 4, 1});
  for (int ranks : {1, 2, 4, 8}) {
    int64_t next = 0;
    for (int r = 0; r < ranks; ++r) {
      const auto block = RankDevices(mesh, r, ranks);
      ASSERT_TRUE(block.ok()) << ranks;
      EXPECT_EQ(block->first, next);
      EXPECT_EQ(block->count, 8 / ranks);
      int64_t product = 1;
      for (int64_t n : block->axis_n) product *= n;
      EXPECT_EQ(product, block->count);  // a sub-mesh: the axis ranges multiply to the device count
      next += block->count;
    }
    EXPECT_EQ(next, 8);
  }
}

TEST(RankDevicesTest, PartialAxisRangeIsWhereTheBlockSitsOnIt) {
  // a1=2, a3=4: 4 ranks of 2 devices take tp pairs {0,1} and {2,3} of each a1 row.
  const auto block = RankDevices(MeshOf({1, 2, 1, 4, 1}), 3, 4);
  ASSERT_TRUE(block.ok());
  EXPECT_EQ(block->first, 6);
  EXPECT_EQ(block->axis_lo, (std::vector<int64_t>{0, 1, 0, 2, 0}));
  EXPECT_EQ(block->axis_n, (std::vector<int64_t>{1, 1, 1, 2, 1}));
}

TEST(RankDevicesTest, CountsThatDoNotSplitTheMeshIntoBlocksAreBadInputListingTheGoodOnes) {
  const Mesh mesh = MeshOf({3, 2});
  EXPECT_EQ(ValidProcessCounts(mesh), (std::vector<int64_t>{1, 3, 6}));
  const auto uneven = RankDevices(mesh, 0, 2);  // 3 devices per rank cut an a1 pair
  ASSERT_FALSE(uneven.ok());
  EXPECT_NE(uneven.status().ToString().find("its 3 devices per process are not a block"), std::string::npos);
  EXPECT_NE(uneven.status().ToString().find("launch with -np one of 1, 3, 6"), std::string::npos);
  const auto indivisible = RankDevices(mesh, 0, 4);
  ASSERT_FALSE(indivisible.ok());
  EXPECT_NE(indivisible.status().ToString().find("4 does not divide the 6 devices"), std::string::npos);
}

}  // namespace
}  // namespace easyplan::kernels
