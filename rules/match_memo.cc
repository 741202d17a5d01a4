#include "rules/match_memo.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

namespace easyplan::rules {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The high bit of every byte of the 8 at `p` (in memory order) that is an ASCII digit. For a 7-bit
// value b, b + 0x50 has its top bit set iff b >= '0' and b + 0x46 iff b > '9'; neither sum carries
// into the next byte, so every byte is tested exactly, and bytes with the top bit set (UTF-8) are
// masked out.
uint64_t DigitBytes(const char* p) {
  uint64_t word;
  std::memcpy(&word, p, sizeof(word));
  if constexpr (std::endian::native == std::endian::big) word = __builtin_bswap64(word);
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  const uint64_t low = word & ~kHigh;
  const uint64_t at_least_0 = low + 0x5050505050505050ULL;
  const uint64_t above_9 = low + 0x4646464646464646ULL;
  return at_least_0 & ~above_9 & ~word & kHigh;
}
bool IsSeparator(char c) { return c == '.' || c == '/'; }
bool IsWordLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

// Length of a repetition count "{n}", "{n,}" or "{n,m}" starting at text[0] == '{', or 0 when the
// brace is a literal (RE2, like Perl, reads a '{' that does not start a count as itself).
size_t RepetitionLength(std::string_view text) {
  size_t i = 1;
  const auto digits = [&] {
    const size_t start = i;
    while (i < text.size() && IsDigit(text[i])) ++i;
    return i > start;
  };
  if (!digits()) return 0;
  if (i < text.size() && text[i] == ',') {
    ++i;
    digits();
  }
  return i < text.size() && text[i] == '}' ? i + 1 : 0;
}

}  // namespace

std::string NumberShape(std::string_view name) {
  std::string shape;
  NumberShapeInto(name, &shape);
  return shape;
}

void NumberShapeInto(std::string_view name, std::string* out) {
  // Copied whole, then the digits of number components are overwritten: one pass, no reallocation
  // once `out` has grown to the longest name (this runs once per tensor of a 92k-tensor tree). Names
  // are mostly letters: eight bytes are tested at a time and the scan jumps straight to a digit.
  // Words are read from `name`, never from the fresh copy: a load that overlaps the copy's wide
  // stores cannot be forwarded from them and stalls.
  out->assign(name);
  char* shape = out->data();
  const char* text = name.data();
  const size_t size = name.size();
  size_t i = 0;
  while (i < size) {
    if (i + 8 <= size) {
      const uint64_t digits = DigitBytes(text + i);
      if (digits == 0) {
        i += 8;
        continue;
      }
      i += static_cast<size_t>(std::countr_zero(digits)) / 8;
    } else if (!IsDigit(text[i])) {
      ++i;
      continue;
    }
    size_t end = i + 1;
    while (end < size && IsDigit(text[end])) ++end;
    const bool starts_component = i == 0 || IsSeparator(text[i - 1]);
    const bool ends_component = end == size || IsSeparator(text[end]);
    if (starts_component && ends_component) std::memset(shape + i, '0', end - i);
    i = end;
  }
}

bool IsNumberBlind(std::string_view pattern) {
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\') {
      // An escaped digit is a backreference or an octal escape; \x31 and \p{..} are caught when the
      // loop reaches their digits. \Q..\E quotes text, where a "{12}" would be literal digits.
      if (i + 1 < pattern.size() && (IsDigit(pattern[i + 1]) || pattern[i + 1] == 'Q')) return false;
      ++i;
      continue;
    }
    if (in_class) {
      if (IsDigit(c)) return false;
      if (c == '[' && i + 1 < pattern.size() && pattern[i + 1] == ':') {
        // A POSIX class such as [:digit:] inside a bracket expression: its ']' does not end the class.
        const size_t end = pattern.find(":]", i + 2);
        if (end == std::string_view::npos) return false;
        i = end + 1;
      } else if (c == ']') {
        in_class = false;
      }
      continue;
    }
    if (IsDigit(c)) {
      // The digit run must follow a plain literal letter: "w1" but not "\\w1", "/1" or ")1".
      size_t start = i;
      while (start > 0 && IsDigit(pattern[start - 1])) --start;
      // Not a letter that belongs to an escape either: \w1, or \pN1 (\pN matches digits).
      const bool escaped =
          (start >= 2 && pattern[start - 2] == '\\') ||
          (start >= 3 && pattern[start - 3] == '\\' && (pattern[start - 2] == 'p' || pattern[start - 2] == 'P'));
      const bool after_letter = start > 0 && IsWordLetter(pattern[start - 1]) && !escaped;
      if (!after_letter) return false;
      continue;
    }
    if (c == '[') {
      in_class = true;
      // "[]a]" and "[^]a]": a ']' right after the opening is a member, not the end.
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') ++i;
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') ++i;
      continue;
    }
    if (c == '{') {
      if (const size_t length = RepetitionLength(pattern.substr(i)); length > 0) i += length - 1;
    }
  }
  return true;
}

MatchMemo::MatchMemo(const RuleMatcher& matcher, const RuleSet& rules) : matcher_(matcher) {
  for (const Rule& rule : rules.rules) {
    if (!IsNumberBlind(rule.pattern)) {
      number_blind_ = false;
      break;
    }
  }
}

const std::vector<int>& MatchMemo::AllMatches(std::string_view name) {
  if (!number_blind_) {
    ++runs_;
    uncached_ = matcher_.AllMatches(name);
    return uncached_;
  }
  NumberShapeInto(name, &key_);
  auto found = memo_.find(key_);
  if (found == memo_.end()) {
    ++runs_;
    found = memo_.emplace(key_, matcher_.AllMatches(key_)).first;
  }
  return found->second;
}

}  // namespace easyplan::rules
