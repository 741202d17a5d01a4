#include "core/flat_string_map.h"

#include <gtest/gtest.h>

#include <string>

namespace easyplan {
namespace {

TEST(FlatStringMapTest, FindsWhatWasInsertedAndNothingElse) {
  FlatStringMap<int> map;
  EXPECT_EQ(map.Find("a"), nullptr);
  for (int i = 0; i < 1000; ++i) map.Insert("key" + std::to_string(i), i);
  EXPECT_EQ(map.size(), 1000u);
  for (int i = 0; i < 1000; ++i) {
    const int* value = map.Find("key" + std::to_string(i));
    ASSERT_NE(value, nullptr) << i;
    EXPECT_EQ(*value, i);
  }
  EXPECT_EQ(map.Find("key1000"), nullptr);
  EXPECT_EQ(map.Find("key"), nullptr);
  EXPECT_EQ(map.Find(""), nullptr);
}

// Keys are bytes: embedded zeros, and keys that are prefixes of each other, stay apart.
TEST(FlatStringMapTest, KeysAreComparedByteForByte) {
  FlatStringMap<std::string> map;
  map.Insert(std::string("a\0b", 3), "with zero");
  map.Insert("a", "short");
  map.Insert(std::string("a\0c", 3), "other zero");
  EXPECT_EQ(*map.Find(std::string("a\0b", 3)), "with zero");
  EXPECT_EQ(*map.Find("a"), "short");
  EXPECT_EQ(*map.Find(std::string("a\0c", 3)), "other zero");
  EXPECT_EQ(map.Find(std::string("a\0", 2)), nullptr);
}

}  // namespace
}  // namespace easyplan
