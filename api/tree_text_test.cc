#include "api/tree_text.h"

#include <gtest/gtest.h>

#include "api/sample_tree_test_util.h"
#include "core/document.h"
#include "core/json_parse.h"
#include "tests/test_util.h"

namespace easyplan::api {
namespace {

TEST(TreeTextTest, BuffersDoNotCountAsParameters) {
  TreeTotals totals = *SampleTree().Totals();
  EXPECT_EQ(totals.tensors, 3);
  EXPECT_EQ(totals.params, 128 * 64 + 1);
  EXPECT_EQ(totals.bytes, 128 * 64 * 2 + 16 * 4 + 4);
}

TEST(TreeTextTest, TableEndsWithHumanSummary) {
  ParamTree tree = SampleTree();
  std::string table = TreeToTable(tree, *tree.Totals());
  EXPECT_NE(table.find("float32 (buffer)"), std::string::npos);
  EXPECT_TRUE(table.ends_with("llama (hf layout): 3 tensors, 8,193 parameters, 16.1 KiB\n")) << table;
}

TEST(TreeTextTest, CsvQuotesShapesAndEndsWithATotalRow) {
  ParamTree tree = SampleTree();
  std::string csv = TreeToCsv(tree, *tree.Totals());
  EXPECT_NE(csv.find("model.embed_tokens.weight,\"[128, 64]\",bfloat16,8192,16384\n"), std::string::npos) << csv;
  EXPECT_TRUE(csv.ends_with("total,,,8193,16452\n")) << csv;
}

}  // namespace
}  // namespace easyplan::api
