#include "core/number_literal.h"

#include <gtest/gtest.h>

namespace easyplan {
namespace {

TEST(ParseDecimalListTest, SplitsPlainDecimalsOnTheSeparator) {
  EXPECT_EQ(ParseDecimalList("9,8,8,7", ','), (std::vector<int64_t>{9, 8, 8, 7}));
  EXPECT_EQ(ParseDecimalList("4x4x8", 'x'), (std::vector<int64_t>{4, 4, 8}));
  EXPECT_EQ(ParseDecimalList("", ','), std::vector<int64_t>{});
}

TEST(ParseDecimalListTest, NamesTheFirstItemThatIsNotAPlainDecimal) {
  for (const char* bad : {"9,,7", "9,", ",9", "+9", "-1", "0x10", " 9", "9a", "99999999999999999999"}) {
    std::string_view item = "unset";
    EXPECT_FALSE(ParseDecimalList(bad, ',', &item)) << bad;
    EXPECT_NE(item, "unset") << bad;
  }
  std::string_view item;
  EXPECT_FALSE(ParseDecimalList("9,8,x,7", ',', &item));
  EXPECT_EQ(item, "x");
}

}  // namespace
}  // namespace easyplan
