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

TEST(ShapeTest, CopiesAndMovesKeepTheDimsOfSmallAndLargeRanks) {
  const Shape small{7, 8, 9};
  const Shape large{1, 2, 3, 4, 5, 6, 7};
  for (const Shape& original : {small, large, Shape{}}) {
    Shape copy = original;
    EXPECT_EQ(copy, original);
    Shape moved = std::move(copy);
    EXPECT_EQ(moved, original);
    EXPECT_EQ(copy.rank(), 0);  // NOLINT(bugprone-use-after-move): a moved-from shape is a scalar
    Shape assigned{42};
    assigned = moved;
    EXPECT_EQ(assigned, original);
    assigned = std::move(moved);
    EXPECT_EQ(assigned.ToString(), original.ToString());
  }
  Shape self = large;
  const Shape& alias = self;
  self = alias;
  EXPECT_EQ(self, large);
}

TEST(ShapeTest, EqualityComparesRankThenDims) {
  EXPECT_EQ((Shape{2, 3}), Shape(std::vector<int64_t>{2, 3}));
  EXPECT_FALSE((Shape{2, 3}) == (Shape{2, 3, 1}));
  EXPECT_FALSE((Shape{1, 2, 3, 4, 5}) == (Shape{1, 2, 3, 4, 6}));
  EXPECT_FALSE(Shape{} == (Shape{1}));
  EXPECT_EQ((Shape{1, 2, 3, 4, 5}).Permuted(std::vector<int>{4, 3, 2, 1, 0}), (Shape{5, 4, 3, 2, 1}));
}

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
