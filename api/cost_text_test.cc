#include "api/cost_text.h"

#include <gtest/gtest.h>

namespace easyplan::api {
namespace {

TEST(HumanSecondsTest, EachMagnitudeGetsTheUnitThatFitsIt) {
  EXPECT_EQ(HumanSeconds(1.47), "1.47 s");
  EXPECT_EQ(HumanSeconds(0.0581), "58.1 ms");
  EXPECT_EQ(HumanSeconds(2.5e-5), "25 us");
  EXPECT_EQ(HumanSeconds(6.5e-7), "650 ns");
  EXPECT_EQ(HumanSeconds(0), "0 s");
}

// "embed 0.00065 us" and "6.94e-12 us hidden behind compute" were rounding residues printed as digits.
// Issue 45: no figure below the printing resolution is printed (cost said "6.94e-12 us hidden behind
// compute", then "< 1 ns"): a rounding residue reads 0.
TEST(HumanSecondsTest, BelowANanosecondReadsAsZero) {
  EXPECT_EQ(HumanSeconds(6.5e-13), "0 s");
  EXPECT_EQ(HumanSeconds(6.94e-18), "0 s");
  EXPECT_EQ(HumanSeconds(-3e-15), "0 s");
  EXPECT_EQ(HumanSeconds(1.5e-9), "1.5 ns");
}

}  // namespace
}  // namespace easyplan::api
