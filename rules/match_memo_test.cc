// Memoized matching by digit shape (rules/match_memo.h): the digit-blindness test and the promise
// that a memo gives exactly what the automaton gives.
#include "rules/match_memo.h"

#include <gtest/gtest.h>
#include <re2/re2.h>

#include <random>

#include "rules/rule_library.h"

namespace easyplan::rules {
namespace {

TEST(IsNumberBlindTest, PatternsThatTreatAllDigitsAlikeAreBlind) {
  for (const char* pattern :
       {".*", "model/layers/\\d+/mlp", "layers\\.\\d{2}\\.", "x{2,3}", "a{3,}", "[^/]+", "[[:digit:]]+/kernel",
        "[[:alnum:]]{4}", "\\w+\\.weight$", "\\bproj\\b", "\\pN", "[]a]", "[^]/]+", "(q|k|v)_proj", "a{b", "\\{x\\}"}) {
    EXPECT_TRUE(IsNumberBlind(pattern)) << pattern;
  }
}

TEST(IsNumberBlindTest, ADigitThatCouldMatchPartOfANumberIsNotBlind) {
  for (const char* pattern :
       {"layers\\.1\\.", "layers/1",        "[0-4]", "[a0]",     "\\x31", "\\061",   "\\1",   "\\w1", "\\pN1", "\\PL1",
        "\\Qa{12}\\E",   "[[:alpha:]{12}]", "a{1",   "a{1,2,3}", "[{2}]", "\\p{N}1", "(a|1)", "a*1",  "(?i)1", "^1"}) {
    EXPECT_FALSE(IsNumberBlind(pattern)) << pattern;
  }
}

TEST(NumberShapeTest, IntoAReusedBufferGivesTheSameShapes) {
  std::string buffer;
  for (std::string_view name : {"model.layers.12.mlp.experts.107.w1.weight", "lm_head.weight", "h.3.attn", ""}) {
    NumberShapeInto(name, &buffer);
    EXPECT_EQ(buffer, NumberShape(name)) << name;  // a shorter name after a longer one leaves nothing behind
  }
}

TEST(NumberShapeTest, ZeroesOnlyTheDigitsOfWholeNumberComponents) {
  EXPECT_EQ(NumberShape("model.layers.12.mlp.experts.7.w1.weight"), "model.layers.00.mlp.experts.0.w1.weight");
  EXPECT_EQ(NumberShape("model/layers/255/ln_2/scale"), "model/layers/000/ln_2/scale");
  EXPECT_EQ(NumberShape("3.x.4"), "0.x.0");
  EXPECT_EQ(NumberShape("h12x.12x/x12"), "h12x.12x/x12");
  EXPECT_EQ(NumberShape(""), "");
}

// NumberShape's definition, one byte at a time, to check the word-at-a-time scan against.
std::string ReferenceNumberShape(std::string_view name) {
  std::string shape(name);
  const auto separator = [](char c) { return c == '.' || c == '/'; };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  for (size_t i = 0; i < shape.size();) {
    if (!digit(shape[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < shape.size() && digit(shape[end])) ++end;
    if ((i == 0 || separator(shape[i - 1])) && (end == shape.size() || separator(shape[end]))) {
      for (size_t k = i; k < end; ++k) shape[k] = '0';
    }
    i = end;
  }
  return shape;
}

TEST(NumberShapeTest, TheWordAtATimeScanAgreesWithTheDefinitionOnRandomNames) {
  // Every byte value, digits next to separators at every offset within an 8-byte word, long names.
  std::mt19937 random(20261124);
  const std::string alphabet = "0123456789./ab_\xc3\xa9\x80\xff:/";
  std::uniform_int_distribution<size_t> length(0, 40), pick(0, alphabet.size() - 1), byte(0, 255);
  for (int trial = 0; trial < 20000; ++trial) {
    std::string name(length(random), '\0');
    for (char& c : name) c = trial % 4 == 0 ? static_cast<char>(byte(random)) : alphabet[pick(random)];
    ASSERT_EQ(NumberShape(name), ReferenceNumberShape(name)) << testing::PrintToString(name);
  }
}

// The property the memo relies on, checked with RE2 itself: for a blind pattern, a subject and its
// number shape match alike, at the same offsets.
TEST(IsNumberBlindTest, BlindPatternsMatchASubjectAndItsNumberShapeAlike) {
  const std::vector<std::string> patterns = {"layers/\\d+/", "\\d{2}/", "\\d\\d\\d", "[^/]+/kernel$",    "\\w{3}$",
                                             "\\b\\d",       "\\D+",    ".{5}_",     "[[:digit:]]{1,2}x"};
  std::mt19937 random(7);
  const std::string alphabet = "ab/_.x0123456789";  // numbers and word-attached digits both occur
  for (int trial = 0; trial < 2000; ++trial) {
    std::string subject;
    const int length = static_cast<int>(random() % 16);
    for (int i = 0; i < length; ++i) subject += alphabet[random() % alphabet.size()];
    const std::string shape = NumberShape(subject);
    for (const std::string& pattern : patterns) {
      ASSERT_TRUE(IsNumberBlind(pattern)) << pattern;
      RE2 re("(" + pattern + ")");
      re2::StringPiece a, b;
      const bool in_subject = RE2::PartialMatch(subject, re, &a);
      const bool in_shape = RE2::PartialMatch(shape, re, &b);
      ASSERT_EQ(in_subject, in_shape) << pattern << " on " << subject;
      if (in_subject) {
        EXPECT_EQ(a.data() - subject.data(), b.data() - shape.data()) << pattern << " on " << subject;
      }
    }
  }
}

class MatchMemoTest : public ::testing::Test {
 protected:
  RuleLibrary library_{schemas::DataSource::Embedded()};
};

TEST_F(MatchMemoTest, GivesTheAutomatonsAnswerAndRunsItOncePerDigitShape) {
  auto presets = library_.GetPresets();
  ASSERT_TRUE(presets.ok());
  auto set = ParseRuleSet(
      "rules:\n"
      "  - {match: 'layers/\\d/mlp', spec: [tp]}\n"
      "  - {match: 'experts/\\d+/w1', spec: [ep]}\n"
      "  - {match: '.*', spec: [null]}\n",
      "rules.yaml", **presets);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  auto matcher = RuleMatcher::Build(*set);
  ASSERT_TRUE(matcher.ok());
  MatchMemo memo(**matcher, *set);
  int names = 0;
  for (int layer : {0, 1, 9, 10, 11, 99, 100}) {
    for (int expert : {0, 5, 12, 255}) {
      for (const char* leaf : {"mlp/kernel", "w1/kernel"}) {
        const std::string name = "model/layers/" + std::to_string(layer) + "/" +
                                 (std::string(leaf) == "w1/kernel" ? "experts/" + std::to_string(expert) + "/" : "") +
                                 leaf;
        EXPECT_EQ(memo.AllMatches(name), (*matcher)->AllMatches(name)) << name;
        ++names;
      }
    }
  }
  // Number shapes: layer 0/1/9 -> "0", 10/11/99 -> "00", 100 -> "000"; experts 0/5 -> "0", 12 -> "00",
  // 255 -> "000". mlp names: 3 shapes; w1 names: 3 x 3 shapes.
  EXPECT_EQ(memo.runs(), 3 + 9);
  EXPECT_EQ(names, 56);
}

TEST_F(MatchMemoTest, RunsTheAutomatonOnEveryNameWhenAPatternNamesADigit) {
  auto presets = library_.GetPresets();
  ASSERT_TRUE(presets.ok());
  auto set = ParseRuleSet("rules:\n  - {match: 'layers/1/', spec: [tp]}\n  - {match: '.*', spec: [null]}\n",
                          "rules.yaml", **presets);
  ASSERT_TRUE(set.ok());
  auto matcher = RuleMatcher::Build(*set);
  ASSERT_TRUE(matcher.ok());
  MatchMemo memo(**matcher, *set);
  EXPECT_EQ(memo.AllMatches("model/layers/1/x"), (std::vector<int>{0, 1}));
  EXPECT_EQ(memo.AllMatches("model/layers/2/x"), (std::vector<int>{1}));
  EXPECT_EQ(memo.runs(), 2);
}

TEST_F(MatchMemoTest, EveryBuiltinRuleFileIsNumberBlind) {
  for (const char* family : {"llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma",
                             "gemma2", "gemma3_text", "gemma3", "phi3", "deepseek_v2", "deepseek_v3", "gpt2"}) {
    auto set = library_.ForModelType(family);
    ASSERT_TRUE(set.ok()) << family;
    for (const Rule& rule : (*set)->rules) EXPECT_TRUE(IsNumberBlind(rule.pattern)) << family << ": " << rule.pattern;
  }
}

}  // namespace
}  // namespace easyplan::rules
