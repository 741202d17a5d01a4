#include "core/did_you_mean.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace easyplan {
namespace {

TEST(EditDistanceTest, CountsBasicEdits) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("abc", "abc"), 0u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("fsdp", "fsd"), 1u);
  EXPECT_EQ(EditDistance("tp", "tpx"), 1u);
  EXPECT_EQ(EditDistance("bf16", "bf32"), 2u);
}

TEST(EditDistanceTest, AdjacentTranspositionCostsOne) {
  EXPECT_EQ(EditDistance("ca", "ac"), 1u);
  EXPECT_EQ(EditDistance("bf61", "bf16"), 1u);
  EXPECT_EQ(EditDistance("lamma", "llama"), 2u);
  EXPECT_EQ(EditDistance("qwne2", "qwen2"), 1u);
}

TEST(EditDistanceTest, IsOptimalStringAlignmentNotDamerau) {
  // Unrestricted Damerau-Levenshtein gives 2 ("ca" -> "ac" -> "abc"); OSA may not edit a swapped
  // pair again, so it needs 3.
  EXPECT_EQ(EditDistance("ca", "abc"), 3u);
}

TEST(EditDistanceTest, IsSymmetricAndCaseSensitive) {
  EXPECT_EQ(EditDistance("sitting", "kitten"), 3u);
  EXPECT_EQ(EditDistance("abcdef", "ab"), EditDistance("ab", "abcdef"));
  EXPECT_EQ(EditDistance("BF16", "bf16"), 2u);
}

TEST(SuggestClosestTest, CaseInsensitiveExactMatchWins) {
  const std::vector<std::string> dtypes = {"float16", "bf16", "bfloat16"};
  EXPECT_EQ(SuggestClosest("BF16", dtypes), "bf16");
  EXPECT_EQ(SuggestClosest("Float16", dtypes), "float16");
}

TEST(SuggestClosestTest, CaseInsensitiveMatchBeatsEarlierCloseCandidate) {
  EXPECT_EQ(SuggestClosest("TPX", {"tp", "tpx"}), "tpx");
}

TEST(SuggestClosestTest, SuggestsSmallestDistanceWithinThreshold) {
  const std::vector<std::string> axes = {"dp", "fsdp", "ep", "tp", "sp"};
  EXPECT_EQ(SuggestClosest("fsdq", axes), "fsdp");
  EXPECT_EQ(SuggestClosest("fdsp", axes), "fsdp");
  EXPECT_EQ(SuggestClosest("architecure", {"architectures", "architecture"}), "architecture");
}

TEST(SuggestClosestTest, ThresholdIsAThirdOfTheWordLength) {
  // |word| = 6 allows distance 2, |word| = 5 only 1.
  EXPECT_EQ(SuggestClosest("llamma", {"qwen", "llama3"}), "llama3");  // distance 2
  EXPECT_EQ(SuggestClosest("lamma", {"llama"}), std::nullopt);        // distance 2 > 1
  EXPECT_EQ(SuggestClosest("mistrl", {"mistral"}), "mistral");        // distance 1
}

TEST(SuggestClosestTest, ShortWordsAllowOnlyDistanceOne) {
  EXPECT_EQ(SuggestClosest("tq", {"tp"}), "tp");
  EXPECT_EQ(SuggestClosest("xy", {"tp"}), std::nullopt);
  EXPECT_EQ(SuggestClosest("a", {"b"}), "b");
}

TEST(SuggestClosestTest, TiesGoToTheEarliestCandidate) {
  EXPECT_EQ(SuggestClosest("xp", {"dp", "ep", "tp"}), "dp");
  EXPECT_EQ(SuggestClosest("xp", {"tp", "ep", "dp"}), "tp");
}

TEST(SuggestClosestTest, FallsBackToShortestPrefixMatch) {
  const std::vector<std::string> kernels = {"vanilla", "flash_attn2_extra", "flash_attn2", "ring"};
  EXPECT_EQ(SuggestClosest("flash", kernels), "flash_attn2");
  EXPECT_EQ(SuggestClosest("num_attention_head", {"hidden_size", "num_attention_heads"}), "num_attention_heads");
  // A candidate is a prefix of the word; among several, the shortest wins too.
  EXPECT_EQ(SuggestClosest("rope_scaling_factor_value", {"rope_scaling"}), "rope_scaling");
  EXPECT_EQ(SuggestClosest("rope_scaling_factor_value", {"rope_scaling", "rope"}), "rope");
}

TEST(SuggestClosestTest, PrefixFallbackNeedsFourCharacters) {
  EXPECT_EQ(SuggestClosest("fla", {"flash_attn2"}), std::nullopt);
  EXPECT_EQ(SuggestClosest("ropexxxxxxxxxx", {"rop"}), std::nullopt);
  EXPECT_EQ(SuggestClosest("ropexxxxxxxxxx", {"rope"}), "rope");
}

TEST(SuggestClosestTest, PrefixTiesGoToTheEarliestCandidate) {
  EXPECT_EQ(SuggestClosest("splash", {"splash_attn_b", "splash_attn_a"}), "splash_attn_b");
}

TEST(SuggestClosestTest, NeverSuggestsTheWordItself) {
  EXPECT_EQ(SuggestClosest("tp", {"tp"}), std::nullopt);
  EXPECT_EQ(SuggestClosest("tp", {"tp", "dp"}), "dp");
  EXPECT_EQ(SuggestClosest("flash", {"flash"}), std::nullopt);
}

TEST(SuggestClosestTest, NoSuggestionForUnrelatedOrEmptyInput) {
  EXPECT_EQ(SuggestClosest("zzzzzz", {"llama", "qwen2", "mistral"}), std::nullopt);
  EXPECT_EQ(SuggestClosest("", {"a", "bc"}), std::nullopt);
  EXPECT_EQ(SuggestClosest("llama", {}), std::nullopt);
}

TEST(JoinQuotedTest, QuotesAndJoinsWithCommas) {
  EXPECT_EQ(JoinQuoted({"a", "b", "c"}), R"("a", "b", "c")");
  EXPECT_EQ(JoinQuoted({"only"}), R"("only")");
  EXPECT_EQ(JoinQuoted({}), "");
  EXPECT_EQ(JoinQuoted({""}), R"("")");
}

}  // namespace
}  // namespace easyplan
