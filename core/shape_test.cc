#include "core/shape.h"

#include <gtest/gtest.h>

#include <limits>

namespace easyplan {
namespace {

TEST(ShapeTest, ScalarHasOneElementAndPrintsEmptyBrackets) {
  Shape scalar;
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.NumElements(), 1);
  EXPECT_EQ(scalar.ToString(), "[]");
}

TEST(ShapeTest, NumElementsIsTheProductOfDims) {
  EXPECT_EQ((Shape{4096, 128256}).NumElements(), int64_t{4096} * 128256);
  EXPECT_EQ((Shape{3, 0, 5}).NumElements(), 0);
}

TEST(ShapeTest, NumElementsOverflowIsNulloptNotAWrongNumber) {
  EXPECT_EQ((Shape{int64_t{1} << 40, int64_t{1} << 30}).NumElements(), std::nullopt);
}

TEST(ShapeTest, PermutedReordersDims) {
  const int perm[] = {0, 2, 1};
  EXPECT_EQ((Shape{8, 14336, 4096}).Permuted(perm), (Shape{8, 4096, 14336}));
}

TEST(ShapeTest, ToStringSeparatesDimsWithCommas) { EXPECT_EQ((Shape{2, 3}).ToString(), "[2, 3]"); }

TEST(ByteSizeTest, SubByteTypesRoundUpToWholeBytes) {
  EXPECT_EQ(ByteSize(3, 4), 2);
  EXPECT_EQ(ByteSize(4, 4), 2);
  EXPECT_EQ(ByteSize(10, 16), 20);
}

TEST(ByteSizeTest, OverflowIsNullopt) {
  EXPECT_EQ(ByteSize(std::numeric_limits<int64_t>::max() / 2, 32), std::nullopt);
}

}  // namespace
}  // namespace easyplan
