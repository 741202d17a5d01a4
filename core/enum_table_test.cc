#include "core/enum_table.h"

#include <gtest/gtest.h>

#include "core/param_tree.h"

namespace easyplan {
namespace {

enum class Fruit { kApple, kPear, kQuince };

constexpr EnumName<Fruit> kFruitNames[] = {
    {Fruit::kApple, "apple"},
    {Fruit::kPear, "pear"},
    {Fruit::kQuince, "quince"},
    {Fruit::kPear, "poire"},  // an alias: parses, never named
};

TEST(EnumTableTest, EveryValuesNameParsesBackToIt) {
  for (Fruit fruit : {Fruit::kApple, Fruit::kPear, Fruit::kQuince}) {
    EXPECT_EQ(ParseEnum(kFruitNames, NameOf(kFruitNames, fruit)), fruit);
  }
}

TEST(EnumTableTest, AValueIsNamedByItsFirstRowAndItsAliasesParseToIt) {
  EXPECT_EQ(NameOf(kFruitNames, Fruit::kPear), "pear");
  EXPECT_EQ(ParseEnum(kFruitNames, "poire"), Fruit::kPear);
}

TEST(EnumTableTest, AnUnknownNameReturnsNullopt) {
  EXPECT_EQ(ParseEnum(kFruitNames, "banana"), std::nullopt);
  EXPECT_EQ(ParseEnum(kFruitNames, "Apple"), std::nullopt);  // names are exact
  EXPECT_EQ(ParseEnum(kFruitNames, ""), std::nullopt);
}

TEST(EnumTableTest, AValueTheTableLacksNamesAsTheFirstRow) {
  EXPECT_EQ(NameOf(kFruitNames, static_cast<Fruit>(7)), "apple");
}

TEST(EnumTableTest, WorksAtCompileTime) {
  static_assert(NameOf(kFruitNames, Fruit::kQuince) == "quince");
  static_assert(ParseEnum(kFruitNames, "pear") == Fruit::kPear);
}

TEST(EnumTableTest, CoreEnumsRoundTripThroughTheirTables) {
  for (Layout layout : {Layout::kEasyDel, Layout::kHf}) EXPECT_EQ(ParseLayout(LayoutName(layout)), layout);
  for (TensorRole role : {TensorRole::kParameter, TensorRole::kBuffer, TensorRole::kScale}) {
    EXPECT_EQ(ParseTensorRole(TensorRoleName(role)), role);
  }
  EXPECT_EQ(ParseLayout("torch"), std::nullopt);
  EXPECT_EQ(ParseTensorRole("weight"), std::nullopt);
}

}  // namespace
}  // namespace easyplan
