#include "core/document.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/document_test_util.h"
#include "core/json_parse.h"

namespace easyplan {
namespace {

using testing::At;
using testing::ParseJsonOrDie;

using Position = Document::Position;

TEST(DocumentTest, BuiltDocumentLocatesWithoutPositions) {
  const Document doc("<set>", Json{{"a", 1}});
  const SourceLoc loc = doc.Locate("/a");
  EXPECT_EQ(loc.file, "<set>");
  EXPECT_EQ(loc.pointer, "/a");
  EXPECT_EQ(loc.line, 0);
  EXPECT_EQ(loc.column, 0);
  EXPECT_EQ(doc.root()["a"], 1);
}

TEST(DocumentTest, LocateUsesGivenPositionsAndNearestAncestor) {
  const Document doc("f.json", Json::object(),
                     {{"", Position{1, 1}}, {"/a", Position{2, 8}}, {"/a/b", Position{3, 10}}});
  EXPECT_EQ(At(doc, "/a/b"), "3:10");
  EXPECT_EQ(At(doc, "/a/c/d"), "2:8");
  EXPECT_EQ(At(doc, "/zzz"), "1:1");
  EXPECT_EQ(At(doc, "not-a-pointer"), "1:1");
  EXPECT_EQ(doc.Locate("/a/c/d").pointer, "/a/c/d");
}

TEST(DocumentTest, MutableRootEditsTheValue) {
  Document doc = ParseJsonOrDie(R"({"a": 1})");
  doc.mutable_root()["b"] = 2;
  EXPECT_EQ(doc.root(), (Json{{"a", 1}, {"b", 2}}));
  EXPECT_EQ(At(doc, "/b"), "1:1");  // no position for the new key: the root's
}

}  // namespace
}  // namespace easyplan
