#include "cli/tree_format.h"

#include <gtest/gtest.h>

#include "core/document.h"
#include "core/json_parse.h"
#include "tests/test_util.h"

namespace easyplan::cli {
namespace {

ParamTree SampleTree() {
  ParamTree tree;
  tree.model_type = "llama";
  tree.layout = Layout::kHf;
  tree.tensors = {{"model.embed_tokens.weight", Shape{128, 64}, DType::kBFloat16, TensorRole::kParameter},
                  {"model.layers.0.self_attn.rotary_emb.inv_freq", Shape{16}, DType::kFloat32, TensorRole::kBuffer},
                  {"step", Shape{}, DType::kInt32, TensorRole::kParameter}};
  return tree;
}

TEST(TreeFormatTest, BuffersDoNotCountAsParameters) {
  TreeTotals totals = *SampleTree().Totals();
  EXPECT_EQ(totals.tensors, 3);
  EXPECT_EQ(totals.params, 128 * 64 + 1);
  EXPECT_EQ(totals.bytes, 128 * 64 * 2 + 16 * 4 + 4);
}

TEST(TreeFormatTest, TableEndsWithHumanSummary) {
  ParamTree tree = SampleTree();
  std::string table = TreeToTable(tree, *tree.Totals());
  EXPECT_NE(table.find("float32 (buffer)"), std::string::npos);
  EXPECT_TRUE(table.ends_with("llama (hf layout): 3 tensors, 8,193 parameters, 16.1 KiB\n")) << table;
}

TEST(TreeFormatTest, CsvQuotesShapesAndEndsWithATotalRow) {
  ParamTree tree = SampleTree();
  std::string csv = TreeToCsv(tree, *tree.Totals());
  EXPECT_NE(csv.find("model.embed_tokens.weight,\"[128, 64]\",bfloat16,8192,16384\n"), std::string::npos) << csv;
  EXPECT_TRUE(csv.ends_with("total,,,8193,16452\n")) << csv;
}

}  // namespace
}  // namespace easyplan::cli
