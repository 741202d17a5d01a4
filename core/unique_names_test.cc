#include "core/unique_names.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace easyplan {
namespace {

std::optional<size_t> FirstDuplicate(const std::vector<std::string>& names) {
  return FirstDuplicateName(names.size(), [&names](size_t i) { return std::string_view(names[i]); });
}

TEST(FirstDuplicateNameTest, GivesTheSecondOfTwoEqualNames) {
  EXPECT_EQ(FirstDuplicate({"model.embed_tokens.weight", "lm_head.weight", "model.embed_tokens.weight", "x"}), 2u);
  EXPECT_EQ(FirstDuplicate({"a", "b", "c", "b", "a"}), 3u);
  EXPECT_EQ(FirstDuplicate({"", "a", ""}), 2u);
}

TEST(FirstDuplicateNameTest, NamesThatAllDifferHaveNoDuplicate) {
  EXPECT_EQ(FirstDuplicate({}), std::nullopt);
  EXPECT_EQ(FirstDuplicate({"w1", "w2", std::string("w1\0", 3)}), std::nullopt);
  std::vector<std::string> names;
  for (int i = 0; i < 50000; ++i) names.push_back("model.layers." + std::to_string(i) + ".mlp.weight");
  EXPECT_EQ(FirstDuplicate(names), std::nullopt);
  names.push_back("model.layers.31337.mlp.weight");
  EXPECT_EQ(FirstDuplicate(names), 50000u);
}

}  // namespace
}  // namespace easyplan
