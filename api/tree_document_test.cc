#include "api/tree_document.h"

#include <gtest/gtest.h>

#include "api/sample_tree_test_util.h"
#include "core/document.h"
#include "core/json_parse.h"
#include "tests/test_util.h"

namespace easyplan::api {
namespace {

TEST(TreeFormatTest, JsonTextParsesToTheSameValueAsTreeToJson) {
  ParamTree tree = SampleTree();
  TreeTotals totals = *tree.Totals();
  auto parsed = ParseJsonDocument(TreeToJsonText(tree, totals), "tree.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->root(), TreeToJson(tree, totals));
}

TEST(TreeFormatTest, JsonOutputUsesOnlyKeysTheJsonSchemaDeclares) {
  std::string schema_text = easyplan::testing::ReadTestFile("schemas/json/tree.schema.json");
  auto schema = ParseJsonDocument(schema_text, "tree.schema.json");
  ASSERT_TRUE(schema.ok());
  const Json& top = schema->root()["properties"];
  const Json& item = top["params"]["items"]["properties"];
  ParamTree tree = SampleTree();
  Json json = TreeToJson(tree, *tree.Totals());
  for (const auto& [key, value] : json.items()) EXPECT_TRUE(top.contains(key)) << key;
  for (const Json& required : schema->root()["required"]) EXPECT_TRUE(json.contains(required.get<std::string>()));
  for (const Json& param : json["params"]) {
    for (const auto& [key, value] : param.items()) EXPECT_TRUE(item.contains(key)) << key;
  }
}

TEST(TreeFormatTest, JsonRoundTripsThroughTreeFromJson) {
  ParamTree tree = SampleTree();
  auto back = TreeFromJson(TreeToJson(tree, *tree.Totals()), "t.json", 100);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->tensors, tree.tensors);
  EXPECT_EQ(back->layout, Layout::kHf);
  EXPECT_EQ(back->model_type, "llama");
}

TEST(TreeFromJsonTest, RejectsDuplicateNamesNegativeDimsUnknownDtypesAndTooManyTensors) {
  auto parse = [](const char* text, int64_t max = 100) { return TreeFromJson(Json::parse(text), "t.json", max); };
  EXPECT_NE(
      parse(
          R"({"params": [{"name": "a", "shape": [1], "dtype": "float32"}, {"name": "a", "shape": [1], "dtype": "float32"}]})")
          .status()
          .diag()
          .message.find("appears twice"),
      std::string::npos);
  EXPECT_NE(parse(R"({"params": [{"name": "a", "shape": [-1], "dtype": "float32"}]})")
                .status()
                .diag()
                .message.find("non-negative"),
            std::string::npos);
  auto unknown = parse(R"({"params": [{"name": "a", "shape": [1], "dtype": "bfloat61"}]})");
  EXPECT_NE(unknown.status().diag().message.find("did you mean 'bfloat16'"), std::string::npos)
      << unknown.status().ToString();
  EXPECT_EQ(parse(R"({"params": [{"name": "a", "shape": [1], "dtype": "float32"}]})", 0).status().diag().loc.pointer,
            "/params");
  EXPECT_EQ(parse(R"([1, 2])").status().diag().loc.file, "t.json");
  EXPECT_EQ(parse(R"({"layout": "flax", "params": []})").status().diag().loc.pointer, "/layout");
}

}  // namespace
}  // namespace easyplan::api
