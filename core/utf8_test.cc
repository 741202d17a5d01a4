#include "core/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace easyplan {
namespace {

TEST(Utf8Test, WellFormedSequencesHaveTheirLength) {
  EXPECT_EQ(Utf8SequenceLength("a", 0), 1u);
  EXPECT_EQ(Utf8SequenceLength("\xC3\xA9", 0), 2u);          // é
  EXPECT_EQ(Utf8SequenceLength("\xE6\xBC\xA2", 0), 3u);      // 漢
  EXPECT_EQ(Utf8SequenceLength("\xF0\x9F\x98\x80", 0), 4u);  // 😀
  EXPECT_EQ(Utf8SequenceLength("\xF4\x8F\xBF\xBF", 0), 4u);  // U+10FFFF, the last code point
  EXPECT_TRUE(IsValidUtf8("caf\xC3\xA9 \xE6\xBC\xA2"));
}

TEST(Utf8Test, MalformedSequencesAreZero) {
  for (const std::string bad : {
           "\x80",              // a continuation byte first
           "\xC0\xAF",          // overlong '/'
           "\xC1\xBF",          // overlong
           "\xE0\x80\xAF",      // overlong three-byte form
           "\xED\xA0\x80",      // a UTF-16 surrogate
           "\xF0\x80\x80\xAF",  // overlong four-byte form
           "\xF4\x90\x80\x80",  // above U+10FFFF
           "\xF5\x80\x80\x80",  // no such lead byte
           "\xC3",              // cut short
           "\xE6\xBC",          // cut short
           "\xE6\x41\xA2",      // a non-continuation byte inside
       }) {
    EXPECT_EQ(Utf8SequenceLength(bad, 0), 0u) << ::testing::PrintToString(bad);
    EXPECT_FALSE(IsValidUtf8("ok" + bad)) << ::testing::PrintToString(bad);
  }
}

}  // namespace
}  // namespace easyplan
