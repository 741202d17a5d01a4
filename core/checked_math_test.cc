#include "core/checked_math.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace easyplan {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(CheckedMathTest, AddReturnsExactSum) {
  EXPECT_EQ(CheckedAdd(2, 3), 5);
  EXPECT_EQ(CheckedAdd(-7, 3), -4);
  EXPECT_EQ(CheckedAdd(kMax - 1, 1), kMax);
  EXPECT_EQ(CheckedAdd(kMin, 0), kMin);
}

TEST(CheckedMathTest, AddDetectsOverflowInBothDirections) {
  EXPECT_EQ(CheckedAdd(kMax, 1), std::nullopt);
  EXPECT_EQ(CheckedAdd(kMin, -1), std::nullopt);
  EXPECT_EQ(CheckedAdd(kMax, kMax), std::nullopt);
}

TEST(CheckedMathTest, MulReturnsExactProduct) {
  EXPECT_EQ(CheckedMul(6, 7), 42);
  EXPECT_EQ(CheckedMul(-6, 7), -42);
  EXPECT_EQ(CheckedMul(kMax, 1), kMax);
  EXPECT_EQ(CheckedMul(kMin, 1), kMin);
  EXPECT_EQ(CheckedMul(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
}

TEST(CheckedMathTest, MulDetectsOverflow) {
  EXPECT_EQ(CheckedMul(int64_t{1} << 32, int64_t{1} << 31), std::nullopt);
  EXPECT_EQ(CheckedMul(kMax, 2), std::nullopt);
  EXPECT_EQ(CheckedMul(kMin, -1), std::nullopt);
}

TEST(CheckedMathTest, EmptyProductIsOne) { EXPECT_EQ(CheckedProduct({}), 1); }

TEST(CheckedMathTest, ProductMultipliesAllValues) {
  const std::vector<int64_t> dims = {2, 3, 4, 5};
  EXPECT_EQ(CheckedProduct(dims), 120);
  const std::vector<int64_t> with_zero = {128256, 0, 4096};
  EXPECT_EQ(CheckedProduct(with_zero), 0);
}

TEST(CheckedMathTest, ProductDetectsOverflowOfAPartialProduct) {
  const std::vector<int64_t> huge = {int64_t{1} << 40, int64_t{1} << 30};
  EXPECT_EQ(CheckedProduct(huge), std::nullopt);
  const std::vector<int64_t> overflow_then_zero = {int64_t{1} << 62, 4, 0};
  EXPECT_EQ(CheckedProduct(overflow_then_zero), std::nullopt);
}

}  // namespace
}  // namespace easyplan
