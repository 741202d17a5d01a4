// A TPU slice's torus (step/torus.h, docs/COST.md "The topology"): Cloud TPU's slice shapes, the
// wraparound rules of "How to Scale Your Model", and the mesh laid on the dims as jax's mesh_utils lays it.
#include "step/torus.h"

#include <gtest/gtest.h>

namespace easyplan::step {
namespace {

HardwareProfile Tpu(std::vector<int64_t> torus, std::string wraparound) {
  HardwareProfile hw;
  hw.name = "test-tpu";
  hw.fast.kind = "ici";
  hw.fast.torus = std::move(torus);
  hw.fast.chips = 1;
  for (int64_t d : hw.fast.torus) hw.fast.chips *= d;
  hw.fast.wraparound = std::move(wraparound);
  return hw;
}
HardwareProfile V5p() { return Tpu({16, 16, 24}, "full_cubes"); }
HardwareProfile V5e() { return Tpu({16, 16}, "full_dims"); }

std::vector<int64_t> Dims(const HardwareProfile& hw, int64_t chips, bool* assumed) {
  return SliceDims(hw.fast, chips, assumed);
}

TEST(TorusTest, SlicesTakeCloudTpusTopologyForTheirChipCount) {
  bool assumed = true;
  EXPECT_EQ(Dims(V5p(), 4, &assumed), (std::vector<int64_t>{2, 2, 1}));
  EXPECT_FALSE(assumed);
  EXPECT_EQ(Dims(V5p(), 8, &assumed), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(Dims(V5p(), 16, &assumed), (std::vector<int64_t>{2, 2, 4}));
  EXPECT_EQ(Dims(V5p(), 64, &assumed), (std::vector<int64_t>{4, 4, 4}));
  EXPECT_EQ(Dims(V5p(), 128, &assumed), (std::vector<int64_t>{4, 4, 8}));
  EXPECT_EQ(Dims(V5p(), 256, &assumed), (std::vector<int64_t>{4, 8, 8}));
  EXPECT_EQ(Dims(V5p(), 4096, &assumed), (std::vector<int64_t>{16, 16, 16}));
  EXPECT_EQ(Dims(V5p(), 6144, &assumed), (std::vector<int64_t>{16, 16, 24}));  // the largest slice
  EXPECT_FALSE(assumed);
  EXPECT_EQ(Dims(V5e(), 8, &assumed), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(Dims(V5e(), 128, &assumed), (std::vector<int64_t>{8, 16}));
  EXPECT_EQ(Dims(V5e(), 256, &assumed), (std::vector<int64_t>{16, 16}));
  EXPECT_FALSE(assumed);
}

TEST(TorusTest, AChipCountWithoutACloudTopologyIsAssumedTheEvenestFitInWholeCubes) {
  bool assumed = false;
  EXPECT_EQ(Dims(V5p(), 96, &assumed), (std::vector<int64_t>{4, 4, 6}));
  EXPECT_TRUE(assumed);
  EXPECT_EQ(Dims(Tpu({16, 16, 16}, "full_cubes"), 3072, &assumed), (std::vector<int64_t>{12, 16, 16}));
  EXPECT_TRUE(assumed);
}

TEST(TorusTest, FullCubesWrapEveryDimAndSmallerSlicesNone) {
  auto slice = LayOutSlice(V5p(), {1, 128, 1, 1, 1});
  ASSERT_TRUE(slice.ok()) << slice.status().ToString();
  EXPECT_EQ(slice->wraps, (std::vector<bool>{true, true, true}));  // 4x4x8
  slice = LayOutSlice(V5p(), {1, 16, 1, 1, 1});
  ASSERT_TRUE(slice.ok());
  EXPECT_EQ(slice->wraps, (std::vector<bool>{false, false, false}));  // 2x2x4
}

TEST(TorusTest, V5eWrapsOnlyADimAsLongAsThePods) {
  auto slice = LayOutSlice(V5e(), {1, 128, 1, 1, 1});
  ASSERT_TRUE(slice.ok());
  EXPECT_EQ(slice->dims, (std::vector<int64_t>{8, 16}));
  EXPECT_EQ(slice->wraps,
            (std::vector<bool>{false, true}));  // the book: "8x16 will have a wraparound on the longer axis"
}

TEST(TorusTest, TheMostNetworkIntensiveAxisTakesTheMostWholeDimsAsJaxDoes) {
  // jax's docstring example: a logical [16, 16] mesh on a 4x4x16 slice puts the last (model) axis on the
  // 4x4 plane and the data axis on the 16.
  auto slice = LayOutSlice(V5p(), {16, 16}, {4, 4, 16});
  ASSERT_TRUE(slice.ok()) << slice.status().ToString();
  EXPECT_EQ(slice->assignment, (std::vector<std::vector<int64_t>>{{1, 4}, {1, 4}, {16, 1}}));
  const TorusSpan model = SpanOf(*slice, {1});
  EXPECT_EQ(model.dims, 2);
  EXPECT_DOUBLE_EQ(model.bandwidth_factor, 2.0);
  EXPECT_EQ(model.hops, 4);  // 4/2 over each wrapped dim of 4
}

TEST(TorusTest, AnAxisThatFitsNoWholeDimsSplitsOneAsJaxAllowsAndLosesItsWraparound) {
  // 8 is no product of {4, 4}: jax's splitting layout spreads its factors, 4 on the first dim, 2 on the
  // second, and the remaining axis of 2 takes the rest of the second dim.
  auto slice = LayOutSlice(V5p(), {2, 8}, {4, 4, 1});
  ASSERT_TRUE(slice.ok()) << slice.status().ToString();
  EXPECT_EQ(slice->assignment, (std::vector<std::vector<int64_t>>{{1, 4}, {2, 2}, {1, 1}}));
  const TorusSpan eight = SpanOf(*slice, {1});
  EXPECT_EQ(eight.dims, 2);
  EXPECT_DOUBLE_EQ(eight.bandwidth_factor, 1.0);  // two dims, each a line (4x4x1 has no wraparound)
}

TEST(TorusTest, AxesOfOneTakeNoDimWhenAnotherSplitsOne) {
  // MaxText's 405B on v6e: fsdp=64, tp=4 on 16x16. tp takes 4 of the first dim, fsdp the rest of it and
  // the whole second dim (jax's splitting layout); the size-1 axes take nothing.
  auto slice = LayOutSlice(V5e(), {1, 64, 1, 4, 1});
  ASSERT_TRUE(slice.ok());
  EXPECT_FALSE(slice->layout_assumed);
  EXPECT_EQ(slice->assignment, (std::vector<std::vector<int64_t>>{{1, 4, 1, 4, 1}, {1, 16, 1, 1, 1}}));
  const TorusSpan fsdp = SpanOf(*slice, {1});
  EXPECT_EQ(fsdp.dims, 2);
  EXPECT_DOUBLE_EQ(fsdp.bandwidth_factor, 1.0);  // 4 of 16 on the first dim is a line: 2 x 1/2
}

TEST(TorusTest, ASmallV5eSliceIsOneRingInJaxsRingOrder) {
  auto slice = LayOutSlice(V5e(), {1, 1, 1, 8, 1});
  ASSERT_TRUE(slice.ok());
  EXPECT_TRUE(slice->ring_order);
  const TorusSpan all = SpanOf(*slice, {3});
  EXPECT_EQ(all.dims, 1);
  EXPECT_DOUBLE_EQ(all.bandwidth_factor, 1.0);  // a closed ring of 8
  EXPECT_EQ(all.hops, 4);
}

TEST(TorusTest, GivenDimsMustHoldTheSlicesChips) {
  auto slice = LayOutSlice(V5p(), {1, 64, 1, 1, 1}, {4, 4, 8});
  ASSERT_FALSE(slice.ok());
  EXPECT_NE(slice.status().ToString().find(
                "--torus 4x4x8: expected 3 dims of test-tpu's torus multiplying to the slice's 64 chips, found 3 "
                "dims multiplying to 128"),
            std::string::npos)
      << slice.status().ToString();
}

}  // namespace
}  // namespace easyplan::step
