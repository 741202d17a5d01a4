#include "core/unique_names.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace easyplan {
namespace {

TEST(UniqueNamesTest, RefusesTheSecondOfTwoEqualNames) {
  UniqueNames names(4);
  EXPECT_TRUE(names.Insert("model.embed_tokens.weight"));
  EXPECT_TRUE(names.Insert("lm_head.weight"));
  EXPECT_FALSE(names.Insert("model.embed_tokens.weight"));
  EXPECT_TRUE(names.Insert(""));
  EXPECT_FALSE(names.Insert(""));
}

TEST(UniqueNamesTest, GrowsPastItsExpectedSizeWithoutLosingNames) {
  std::vector<std::string> storage;
  for (int i = 0; i < 5000; ++i) storage.push_back("model.layers." + std::to_string(i) + ".mlp.weight");
  UniqueNames names(3);  // far too small: the table must grow many times
  for (const std::string& name : storage) EXPECT_TRUE(names.Insert(name)) << name;
  for (const std::string& name : storage) EXPECT_FALSE(names.Insert(name)) << name;
}

TEST(UniqueNamesTest, NamesThatDifferOnlyInTheirLastByteAreDistinct) {
  UniqueNames names(2);
  EXPECT_TRUE(names.Insert("w1"));
  EXPECT_TRUE(names.Insert("w2"));
  EXPECT_TRUE(names.Insert(std::string_view("w1\0", 3)));
  EXPECT_FALSE(names.Insert("w2"));
}

}  // namespace
}  // namespace easyplan
