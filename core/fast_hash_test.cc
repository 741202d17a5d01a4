#include "core/fast_hash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

namespace easyplan {
namespace {

TEST(FastHashTest, EqualBytesHashEqual) {
  const std::string a = "model.layers.12.mlp.experts.37.gate_proj.weight";
  const std::string b(a);  // another buffer, same bytes
  EXPECT_EQ(HashBytes(a), HashBytes(b));
  EXPECT_EQ(HashBytes(a, 7), HashBytes(b, 7));
  EXPECT_NE(HashBytes(a, 7), HashBytes(a, 8));
}

// Every length from 0 to 80 (each tail branch and several full steps), and a one-bit change at every
// position of every length: no two of these strings may share a hash.
TEST(FastHashTest, EveryLengthAndEveryFlippedBitGivesANewHash) {
  std::unordered_set<uint64_t> seen;
  size_t strings = 0;
  for (size_t length = 0; length <= 80; ++length) {
    std::string text(length, '\0');
    for (size_t i = 0; i < length; ++i) text[i] = static_cast<char>('a' + (i * 7) % 26);
    seen.insert(HashBytes(text));
    ++strings;
    for (size_t i = 0; i < length; ++i) {
      for (int bit = 0; bit < 8; ++bit) {
        std::string flipped = text;
        flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
        seen.insert(HashBytes(flipped));
        ++strings;
      }
    }
  }
  EXPECT_EQ(seen.size(), strings);
}

// Zero bytes are data: strings of NULs of different lengths, and a NUL moved along, differ.
TEST(FastHashTest, ZeroBytesAndLengthsCount) {
  std::unordered_set<uint64_t> seen;
  for (size_t length = 0; length <= 40; ++length) seen.insert(HashBytes(std::string(length, '\0')));
  EXPECT_EQ(seen.size(), 41u);
  std::unordered_set<uint64_t> moved;
  for (size_t i = 0; i < 20; ++i) {
    std::string text(20, 'x');
    text[i] = '\0';
    moved.insert(HashBytes(text));
  }
  EXPECT_EQ(moved.size(), 20u);
}

// Names that differ only in their numbers, the keys the planner's tables hold, spread over the low
// bits a power-of-two table uses.
TEST(FastHashTest, NumberedNamesSpreadOverTheLowBits) {
  constexpr size_t kBuckets = 1024;
  std::vector<int> load(kBuckets, 0);
  for (int layer = 0; layer < 61; ++layer) {
    for (int expert = 0; expert < 256; ++expert) {
      const std::string name =
          "model.layers." + std::to_string(layer) + ".mlp.experts." + std::to_string(expert) + ".up_proj.weight";
      ++load[HashBytes(name) % kBuckets];
    }
  }
  // 15,616 names over 1,024 buckets: 15.25 on average; a uniform hash stays well under 40.
  EXPECT_LT(*std::max_element(load.begin(), load.end()), 40);
  EXPECT_GT(*std::min_element(load.begin(), load.end()), 0);
}

}  // namespace
}  // namespace easyplan
