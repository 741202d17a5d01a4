// Matmul efficiency by shape (step/matmul_tiling.h) on the embedded profiles: the measured shape runs
// at the measured efficiency, padding and partial waves waste what the tiles leave idle.
#include "step/matmul_tiling.h"

#include <gtest/gtest.h>

#include <string>

#include "schemas/data_source.h"

namespace easyplan::step {
namespace {

step::HardwareProfile Profile(const std::string& name) {
  const schemas::DataSource data = schemas::DataSource::Embedded();
  StatusOr<Document> doc = data.ReadDocument("schemas/hardware/" + name + ".yaml");
  EXPECT_TRUE(doc.ok()) << doc.status().ToString();
  StatusOr<step::HardwareProfile> profile = step::ParseHardwareProfile(*doc, name);
  EXPECT_TRUE(profile.ok()) << profile.status().ToString();
  return *profile;
}

TEST(MatmulTilingTest, A4096CubedBf16MatmulOnH100RunsAtTheMamfFraction) {
  const step::HardwareProfile h100 = Profile("h100-sxm");
  EXPECT_NEAR(ShapeEfficiency(h100, {1, 4096, 4096, 4096}), h100.matmul_efficiency, 1e-9);
}

TEST(MatmulTilingTest, EveryProfileRunsItsMeasuredShapeAtItsMeasuredEfficiency) {
  for (const char* name : {"h100-sxm", "h200", "a100-80g", "b200", "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e"}) {
    const step::HardwareProfile hw = Profile(name);
    ASSERT_TRUE(hw.matmul_tiling.has_value()) << name;
    const auto& at = hw.matmul_tiling->measured_at;
    EXPECT_NEAR(ShapeEfficiency(hw, {1, at[0], at[1], at[2]}), hw.matmul_efficiency, 1e-9) << name;
  }
}

TEST(MatmulTilingTest, AProfileWithoutTilingRunsEveryShapeAtItsEfficiency) {
  const step::HardwareProfile mi300x = Profile("mi300x");
  EXPECT_FALSE(mi300x.matmul_tiling.has_value());
  EXPECT_DOUBLE_EQ(ShapeEfficiency(mi300x, {1, 129, 7, 3}), mi300x.matmul_efficiency);
}

TEST(MatmulTilingTest, ADimOf129OnA128TileWastesAlmostHalfATile) {
  // Two tiles of 128 rows run where one and a row were needed: 129 of 256 rows are the matmul's own.
  EXPECT_NEAR(TileUtilization({128, 128, 1}, 0, {1, 129, 128, 4096}), 129.0 / 256.0, 1e-12);
  EXPECT_DOUBLE_EQ(TileUtilization({128, 128, 1}, 0, {1, 128, 128, 4096}), 1.0);
}

TEST(MatmulTilingTest, APartialLastWaveTakesAsLongAsAFullOne) {
  // 133 tiles on 132 SMs: a second wave of one tile, 133 of 264 tile slots used.
  EXPECT_NEAR(TileUtilization({128, 128, 1}, 132, {1, 128 * 133, 128, 1}), 133.0 / 264.0, 1e-12);
  EXPECT_DOUBLE_EQ(TileUtilization({128, 128, 1}, 132, {1, 128 * 132, 128, 1}), 1.0);
}

TEST(MatmulTilingTest, ASmallMatmulTakesASmallerTileThatFillsTheSms) {
  // 1024 x 1024 on H100: 256x128 tiles make 32 blocks for 132 SMs; cuBLAS's 64x64 make 256, two waves.
  const step::HardwareProfile h100 = Profile("h100-sxm");
  EXPECT_NEAR(ShapeUtilization(*h100.matmul_tiling, {1, 1024, 1024, 1024}), 256.0 / 264.0, 1e-12);
  // 2048 x 2048 on A100's 108 SMs: 256x128 tiles would run 128 blocks in two waves (59%); narrower
  // tiles cut that to 10 waves of 64x64 (95%).
  const step::HardwareProfile a100 = Profile("a100-80g");
  EXPECT_NEAR(ShapeUtilization(*a100.matmul_tiling, {1, 2048, 2048, 16384}), 1024.0 / 1080.0, 1e-12);
}

TEST(MatmulTilingTest, NoShapeRunsFasterThanTheMeasuredEfficiency) {
  // 8192 x 14336 fills its last wave better than MAMF's shape did, but MAMF is the best measured.
  const step::HardwareProfile h100 = Profile("h100-sxm");
  EXPECT_GT(ShapeUtilization(*h100.matmul_tiling, {1, 8192, 14336, 4096}), 256.0 / 264.0);
  EXPECT_DOUBLE_EQ(ShapeEfficiency(h100, {1, 8192, 14336, 4096}), h100.matmul_efficiency);
}

TEST(MatmulTilingTest, AMatmulTooSmallForAWaveSplitsK) {
  // One row against 3584 columns on A100: 56 tiles of 64x64 for 108 SMs; 14 tiles of 64x256 split k in 7
  // make 98 units, one wave of 91%, each tile using 1 row of 64.
  const step::HardwareProfile a100 = Profile("a100-80g");
  EXPECT_NEAR(ShapeUtilization(*a100.matmul_tiling, {1, 1, 3584, 8192}), (1.0 / 64) * (98.0 / 108.0), 1e-12);
}

TEST(MatmulTilingTest, V6ePadsTo256WhereV5pPadsTo128) {
  const step::HardwareProfile v6e = Profile("tpu-v6e"), v5p = Profile("tpu-v5p");
  // k = n = 128 fills a v5p MXU and half of a v6e one, in each of the two dims.
  EXPECT_NEAR(ShapeEfficiency(v5p, {1, 8192, 128, 128}), v5p.matmul_efficiency, 1e-9);
  EXPECT_NEAR(ShapeEfficiency(v6e, {1, 8192, 128, 128}), v6e.matmul_efficiency * 0.25, 1e-9);
  // Rows are padded to the MXU's 8: one decode row uses 1 of 8.
  EXPECT_NEAR(ShapeEfficiency(v5p, {1, 1, 8192, 8192}), v5p.matmul_efficiency / 8, 1e-9);
}

TEST(MatmulTilingTest, AMatmulWithOneRowIsMemoryBoundAnyway) {
  // Decode: one token against a 4096 x 4096 bf16 weight. Even at the wasteful efficiency of one row in
  // a 64-row tile, the FLOPs take less time than reading the weight from HBM.
  for (const char* name : {"h100-sxm", "a100-80g", "b200", "tpu-v5p", "tpu-v6e"}) {
    const step::HardwareProfile hw = Profile(name);
    const double flops = 2.0 * 4096 * 4096;
    const double compute_s = flops / (hw.peak_flops_bf16 * ShapeEfficiency(hw, {1, 1, 4096, 4096}));
    const double memory_s = 2.0 * 4096 * 4096 / (hw.hbm_bandwidth * hw.hbm_efficiency);
    EXPECT_LT(compute_s, memory_s) << name;
  }
}

TEST(MatmulTilingTest, TheAssumptionNamesTheMeasuredShapeAndTheSms) {
  const std::string line = MatmulEfficiencyAssumption(Profile("h100-sxm"));
  EXPECT_NE(line.find("2048x2048x13312"), std::string::npos) << line;
  EXPECT_NE(line.find("132 SMs"), std::string::npos) << line;
}

// The detailed line ran to three lines of a terminal at the end of every cost and suggest.
TEST(MatmulTilingTest, TheShortAssumptionFitsOneLineAndPointsToVerbose) {
  const std::string line = MatmulEfficiencyAssumption(Profile("h100-sxm"), /*detailed=*/false);
  EXPECT_LE(line.size() + std::string("assumed ").size(), 160u) << line;
  EXPECT_NE(line.find("0.803 of h100-sxm's peak"), std::string::npos) << line;
  EXPECT_NE(line.find("--verbose"), std::string::npos) << line;
  EXPECT_EQ(line.find("256x128x1"), std::string::npos) << line;
}

}  // namespace
}  // namespace easyplan::step
