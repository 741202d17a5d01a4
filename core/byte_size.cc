#include "core/byte_size.h"

#include <array>
#include <cctype>
#include <string>

namespace easyplan {
namespace {

struct Unit {
  std::string_view name;
  int64_t factor;
};

constexpr int64_t kKi = 1024;
constexpr std::array<Unit, 11> kUnits = {{
    {"b", 1},
    {"kb", 1000},
    {"mb", 1000 * 1000},
    {"gb", 1000LL * 1000 * 1000},
    {"tb", 1000LL * 1000 * 1000 * 1000},
    {"pb", 1000LL * 1000 * 1000 * 1000 * 1000},
    {"kib", kKi},
    {"mib", kKi* kKi},
    {"gib", kKi* kKi* kKi},
    {"tib", kKi* kKi* kKi* kKi},
    {"pib", kKi* kKi* kKi* kKi* kKi},
}};

Status Bad(std::string_view text, std::string_view flag, std::string_view why) {
  return Status::BadInput({},
                          std::string(flag) + " '" + std::string(text) + "' is not a byte size: " + std::string(why),
                          {"write it as 80GiB, 95GB, 1.5TiB or a number of bytes"});
}

}  // namespace

StatusOr<int64_t> ParseByteSize(std::string_view text, std::string_view flag) {
  size_t pos = 0;
  // Integer and fraction digits are kept exactly (no floating point): value = whole + frac / 10^k.
  int64_t whole = 0;
  bool digits = false;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
    if (__builtin_mul_overflow(whole, 10, &whole) || __builtin_add_overflow(whole, text[pos] - '0', &whole)) {
      return Bad(text, flag, "too large");
    }
    digits = true;
    ++pos;
  }
  int64_t fraction = 0;
  int64_t scale = 1;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      if (scale < 1'000'000'000'000LL) {  // 12 decimals are more than any unit can use
        fraction = fraction * 10 + (text[pos] - '0');
        scale *= 10;
      }
      digits = true;
      ++pos;
    }
  }
  if (!digits) return Bad(text, flag, "expected a number");
  while (pos < text.size() && text[pos] == ' ') ++pos;
  std::string unit;
  for (; pos < text.size(); ++pos) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[pos])));
  int64_t factor = 1;
  if (!unit.empty()) {
    bool found = false;
    for (const Unit& candidate : kUnits) {
      if (unit == candidate.name) {
        factor = candidate.factor;
        found = true;
      }
    }
    if (!found) {
      return Bad(text, flag,
                 unit.size() == 1 ? "a bare '" + unit + "' is ambiguous: write GB (10^9) or GiB (2^30)"
                                  : "unknown unit '" + unit + "'");
    }
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(whole, factor, &bytes)) return Bad(text, flag, "larger than 2^63 bytes");
  // fraction * factor / scale without overflow: factor <= 2^50 and fraction < 10^12 could overflow,
  // so divide first where it is exact enough (both are powers of small primes).
  __extension__ using Wide = __int128;  // fraction * factor can exceed int64 before the division
  const Wide extra = static_cast<Wide>(fraction) * factor / scale;
  if (extra > INT64_MAX - bytes) return Bad(text, flag, "larger than 2^63 bytes");
  return bytes + static_cast<int64_t>(extra);
}

}  // namespace easyplan
