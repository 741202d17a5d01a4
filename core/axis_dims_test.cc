#include "core/axis_dims.h"

#include <gtest/gtest.h>

namespace easyplan {
namespace {

std::vector<int64_t> Fill(std::vector<int64_t> dims, int64_t devices) {
  auto filled = FillAxisDims(dims, devices, "dims");
  EXPECT_TRUE(filled.ok()) << filled.status().ToString();
  return filled.ok() ? *filled : std::vector<int64_t>{};
}

std::string FillError(std::vector<int64_t> dims, int64_t devices) {
  Status valid = ValidateAxisDims(dims, "dims");
  if (!valid.ok()) return valid.diag().message;
  auto filled = FillAxisDims(dims, devices, "dims");
  return filled.ok() ? "no error" : filled.status().diag().message;
}

// Vectors from MaxText's fill_unspecified_mesh_axes (src/MaxText/max_utils.py, tests/unit/max_utils_test.py)
// and numpy reshape.
TEST(AxisDimsTest, FillsTheSingleMinusOne) {
  EXPECT_EQ(Fill({2, -1, 5}, 20), (std::vector<int64_t>{2, 2, 5}));
  EXPECT_EQ(Fill({2, -1}, 2), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(Fill({1, -1, 1, 2, 1}, 8), (std::vector<int64_t>{1, 4, 1, 2, 1}));
  EXPECT_EQ(Fill({1, -1, 1, 1, 1}, 8), (std::vector<int64_t>{1, 8, 1, 1, 1}));
  EXPECT_EQ(Fill({2, 2, 1, 2, 1}, 8), (std::vector<int64_t>{2, 2, 1, 2, 1}));
}

TEST(AxisDimsTest, ErrorsStateTheNumbers) {
  EXPECT_EQ(FillError({2, -1, 3}, 10),
            "cannot fill the -1 in dims [2, -1, 3] for 10 devices: 10 is not divisible by the product of the other "
            "axes (6)");
  EXPECT_EQ(FillError({-1, -1, 2}, 8),
            "dims [-1, -1, 2] has 2 entries of -1; at most one axis can take the remaining devices");
  EXPECT_EQ(FillError({2, 2, 2}, 4),
            "dims [2, 2, 2] uses 8 devices, but there are 4; the product of the axis sizes must equal the device "
            "count (or use -1 for one axis)");
  EXPECT_EQ(
      FillError({4, -1}, 2),
      "cannot fill the -1 in dims [4, -1] for 2 devices: 2 is not divisible by the product of the other axes (4)");
  EXPECT_EQ(FillError({1, 0, 1}, 2), "dims [1, 0, 1]: entry 1 is 0, expected a positive size or -1");
}

TEST(AxisDimsTest, OverflowingProductIsRejected) {
  EXPECT_EQ(FillError({int64_t{1} << 40, int64_t{1} << 40}, 8),
            "dims [1099511627776, 1099511627776]: the product of the sizes overflows 64 bits");
}

}  // namespace
}  // namespace easyplan
