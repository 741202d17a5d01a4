// rules/_activations.yaml as a value: parse errors name the file, the line and the key.
#include "planner/activation_table.h"

#include <gtest/gtest.h>

#include "planner/activations_test_util.h"

namespace easyplan::planner {
namespace {

using activations_testing::ActivationsTest;

TEST(ActivationTableTest, ParseErrorsNameTheFileAndKey) {
  auto bad = ActivationTable::Parse("attention:\n  query3d: {axes: [BATCH], bthdd: [BATCH]}\n", "t.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("t.yaml:2"), std::string::npos) << bad.status().ToString();
  EXPECT_NE(bad.status().ToString().find("bthdd"), std::string::npos);
  auto missing = ActivationTable::Parse("attention:\n  query3d: {axes: [BATCH]}\n", "t.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().ToString().find("missing the field 'query'"), std::string::npos);
}

TEST_F(ActivationsTest, KernelAndRaggedSectionsRejectMalformedEntries) {
  // The real file, with one kernel or ragged-cache entry broken at a time.
  auto text = schemas::DataSource::Embedded().Read("rules/_activations.yaml");
  ASSERT_TRUE(text.ok());
  struct Case {
    std::string from, to, phrase;
  };
  const Case cases[] = {
      {"    mode_dim: 2\n    layout: bhtd", "    mode_dim: 3\n    layout: bhtd", "get_mode tests dim 1 or 2"},
      {"    layout: bhtd", "    layout: [bhtd]", "expected a string"},
      {"      cu_seqlens: {rank: 1}", "      cu_seqlens: {}", "either a field or a rank"},
      {"      query: {field: query, keep: [0, 2], tensor: query}", "      query: {field: queries, tensor: query}",
       "'queries' is not an AttnShardingRules field"},
      {"      bias: {field: bias, keep: [0, 1], tensor: bias}", "      bias: {field: bias, keep: [-1], tensor: bias}",
       "a dim index is an integer from 0 to 7"},
      {"      output: {field: output, keep: [0, 2], tensor: output}", "      output: {field: output, tensor: outputs}",
       "'outputs' is not a kernel tensor"},
      {"    decode_only: true", "    decode_only: yes please", "expected true or false"},
      {"  page: ATTN_DP", "  page: [ATTN_DP]", "expected one token"},
      {"  upcast: [bfloat16, float32]", "  upcast: bfloat16", "expected a list of dtype names"},
  };
  for (const Case& c : cases) {
    std::string broken = *text;
    const size_t at = broken.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    broken.replace(at, c.from.size(), c.to);
    auto table = ActivationTable::Parse(broken, "rules/_activations.yaml");
    ASSERT_FALSE(table.ok()) << c.to;
    EXPECT_NE(table.status().ToString().find(c.phrase), std::string::npos) << table.status().ToString();
  }
  EXPECT_NE(table_.FindKernel("autoregressive_decodeattn"), nullptr);
  EXPECT_EQ(table_.FindKernel("autoregressive_decodeattn"), table_.FindKernel("decode"));
  EXPECT_EQ(table_.FindKernel("splash"), nullptr);
}

}  // namespace
}  // namespace easyplan::planner
