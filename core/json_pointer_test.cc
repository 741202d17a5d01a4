#include "core/json_pointer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace easyplan {
namespace {

TEST(EscapePointerTokenTest, EscapesTildeBeforeSlash) {
  EXPECT_EQ(EscapePointerToken("plain"), "plain");
  EXPECT_EQ(EscapePointerToken("a/b"), "a~1b");
  EXPECT_EQ(EscapePointerToken("~"), "~0");
  // RFC 6901 §4: "~1" as a key must come back as "~1", not "/", so '~' is escaped first.
  EXPECT_EQ(EscapePointerToken("~1/"), "~01~1");
  EXPECT_EQ(EscapePointerToken(""), "");
  EXPECT_EQ(PointerToken("a/b"), "a~1b");
}

TEST(UnescapePointerTokenTest, UndoesEscapeAndKeepsStrayTildes) {
  EXPECT_EQ(UnescapePointerToken("a~1b"), "a/b");
  EXPECT_EQ(UnescapePointerToken("~01"), "~1");
  EXPECT_EQ(UnescapePointerToken("~0~1"), "~/");
  EXPECT_EQ(UnescapePointerToken("~2"), "~2");
  EXPECT_EQ(UnescapePointerToken("a~"), "a~");
  for (const char* key : {"", "plain", "a/b", "~", "~1", "~0/~1//", "layers.0.mlp"}) {
    EXPECT_EQ(UnescapePointerToken(EscapePointerToken(key)), key) << key;
  }
}

TEST(AppendPointerTest, AppendsEscapedKeysAndIndices) {
  std::string pointer;
  AppendPointerKey(pointer, "weight_map");
  AppendPointerKey(pointer, "model/embed~tokens");
  AppendPointerIndex(pointer, 12);
  EXPECT_EQ(pointer, "/weight_map/model~1embed~0tokens/12");
  std::string root;
  AppendPointerKey(root, "");
  EXPECT_EQ(root, "/");
}

TEST(PointerToTest, BuildsChildPointers) {
  EXPECT_EQ(PointerToMember("", "a"), "/a");
  EXPECT_EQ(PointerToMember("/a", "b/c"), "/a/b~1c");
  EXPECT_EQ(PointerToElement("/layers", 3), "/layers/3");
  EXPECT_EQ(PointerToElement("", 0), "/0");
}

TEST(JoinPointerTest, JoinsAndSplitsBackToTheSameKeys) {
  EXPECT_EQ(JoinPointer({}), "");
  EXPECT_EQ(JoinPointer({"a", "b/c", "~"}), "/a/b~1c/~0");
  const std::vector<std::vector<std::string>> paths = {{}, {""}, {"a"}, {"a", ""}, {"a/b", "~1", "0"}};
  for (const std::vector<std::string>& keys : paths) EXPECT_EQ(SplitPointer(JoinPointer(keys)), keys);
}

TEST(SplitPointerTest, UnescapesEveryKey) {
  EXPECT_EQ(SplitPointer(""), std::vector<std::string>{});
  EXPECT_EQ(SplitPointer("/"), std::vector<std::string>{""});
  EXPECT_EQ(SplitPointer("/a/b~1c"), (std::vector<std::string>{"a", "b/c"}));
  EXPECT_EQ(SplitPointer("/a/"), (std::vector<std::string>{"a", ""}));
  EXPECT_EQ(SplitPointer("not-a-pointer"), std::vector<std::string>{});
}

TEST(ParentPointerTest, DropsTheLastKey) {
  EXPECT_EQ(ParentPointer("/a/b~1c"), "/a");
  EXPECT_EQ(ParentPointer("/a"), "");
  EXPECT_EQ(ParentPointer(""), "");
  EXPECT_EQ(ParentPointer("not-a-pointer"), "");
}

TEST(PointerKeyTest, FirstAndLastKeysAreUnescaped) {
  EXPECT_EQ(LastPointerKey("/weight_map/a~1b"), "a/b");
  EXPECT_EQ(LastPointerKey("/a"), "a");
  EXPECT_EQ(LastPointerKey(""), "");
  EXPECT_EQ(FirstPointerKey("/a~1b/c"), "a/b");
  EXPECT_EQ(FirstPointerKey("/rope_scaling"), "rope_scaling");
  EXPECT_EQ(FirstPointerKey(""), "");
  EXPECT_EQ(FirstPointerKey("/"), "");
}

}  // namespace
}  // namespace easyplan
