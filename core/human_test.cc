#include "core/human.h"

#include <gtest/gtest.h>

#include <clocale>
#include <cstdlib>
#include <limits>

namespace easyplan {
namespace {

TEST(WithThousandsTest, GroupsDigitsByThree) {
  EXPECT_EQ(WithThousands(0), "0");
  EXPECT_EQ(WithThousands(999), "999");
  EXPECT_EQ(WithThousands(1000), "1,000");
  EXPECT_EQ(WithThousands(8030261248), "8,030,261,248");
  EXPECT_EQ(WithThousands(-1234567), "-1,234,567");
  EXPECT_EQ(WithThousands(std::numeric_limits<int64_t>::min()), "-9,223,372,036,854,775,808");
}

TEST(HumanBytesBinaryTest, UsesBinaryUnitsWithThreeSignificantFigures) {
  EXPECT_EQ(HumanBytesBinary(0), "0 B");
  EXPECT_EQ(HumanBytesBinary(1023), "1023 B");
  EXPECT_EQ(HumanBytesBinary(1024), "1.00 KiB");
  EXPECT_EQ(HumanBytesBinary(int64_t{80} << 30), "80.0 GiB");
  EXPECT_EQ(HumanBytesBinary(16060522496), "15.0 GiB");
  EXPECT_EQ(HumanBytesBinary(int64_t{123} << 30), "123 GiB");
}

TEST(HumanBytesBinaryTest, RoundingUpCarriesIntoTheNextUnit) {
  EXPECT_EQ(HumanBytesBinary((int64_t{1} << 40) - (int64_t{1} << 28)), "1.00 TiB");
}

TEST(HumanBytesTest, IgnoresTheProcessLocale) {
  const char* previous = std::setlocale(LC_ALL, nullptr);
  std::string saved = previous ? previous : "C";
  if (std::setlocale(LC_ALL, "de_DE.UTF-8") == nullptr) {
    // scripts/test generates the locale and sets EASYPLAN_REQUIRE_LOCALES, so there it must exist.
    if (std::getenv("EASYPLAN_REQUIRE_LOCALES") != nullptr) {
      FAIL() << "de_DE.UTF-8 locale not installed but EASYPLAN_REQUIRE_LOCALES is set "
                "(localedef -i de_DE -f UTF-8 de_DE.UTF-8)";
    }
    GTEST_SKIP() << "de_DE.UTF-8 locale not installed";
  }
  EXPECT_EQ(HumanBytesBinary(16060522496), "15.0 GiB");
  EXPECT_EQ(WithThousands(1234567), "1,234,567");
  std::setlocale(LC_ALL, saved.c_str());
}

}  // namespace
}  // namespace easyplan
