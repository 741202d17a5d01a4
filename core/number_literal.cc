#include "core/number_literal.h"

#include <algorithm>
#include <charconv>
#include <system_error>

namespace easyplan {
namespace {

/// Literals longer than this are shortened in messages.
constexpr size_t kMaxLiteralInMessage = 40;

/// For a decimal literal ("-12.5e3"), whether its magnitude is at least 1 (so that a from_chars
/// range error means overflow rather than underflow). REQUIRES: some mantissa digit is nonzero.
bool MagnitudeAtLeastOne(std::string_view literal) {
  long long digits_before_point = 0;
  long long first_nonzero = -1;  // index among mantissa digits
  long long digit_index = 0;
  bool seen_point = false;
  size_t i = 0;
  for (; i < literal.size() && literal[i] != 'e' && literal[i] != 'E'; ++i) {
    const char c = literal[i];
    if (c == '.') {
      seen_point = true;
    } else if (IsAsciiDigit(c)) {
      if (first_nonzero < 0 && c != '0') first_nonzero = digit_index;
      if (!seen_point) ++digits_before_point;
      ++digit_index;
    }
  }
  long long written_exponent = 0;
  if (i < literal.size()) {
    bool negative = false;
    for (++i; i < literal.size(); ++i) {
      if (literal[i] == '-') negative = true;
      if (IsAsciiDigit(literal[i]) && written_exponent < 1000000000) {
        written_exponent = written_exponent * 10 + (literal[i] - '0');
      }
    }
    if (negative) written_exponent = -written_exponent;
  }
  // The power of ten of the leading nonzero digit.
  const long long exponent = digits_before_point - first_nonzero - 1 + written_exponent;
  return exponent >= 0;
}

}  // namespace

std::string ShortenLiteral(std::string_view text) {
  if (text.size() <= kMaxLiteralInMessage) return std::string(text);
  return std::string(text.substr(0, kMaxLiteralInMessage - 3)) + "...";
}

std::optional<double> ParseDecimalFloat(std::string_view literal) {
  std::string_view digits = literal;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  double value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error == std::errc::result_out_of_range) {
    if (MagnitudeAtLeastOne(digits)) return std::nullopt;
    return digits.front() == '-' ? -0.0 : 0.0;
  }
  if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

std::optional<std::vector<int64_t>> ParseDecimalList(std::string_view text, char separator,
                                                     std::string_view* bad_item) {
  std::vector<int64_t> values;
  if (text.empty()) return values;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(separator, start), text.size());
    const std::string_view item = text.substr(start, end - start);
    int64_t value = 0;
    const bool digits = !item.empty() && item.find_first_not_of("0123456789") == std::string_view::npos;
    const auto [last, error] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (!digits || error != std::errc() || last != item.data() + item.size()) {
      if (bad_item != nullptr) *bad_item = item;
      return std::nullopt;
    }
    values.push_back(value);
    start = end + 1;
  }
  return values;
}

std::string IntegerRangeMessage(std::string_view literal) {
  return "integer " + ShortenLiteral(literal) + " does not fit in 64 bits";
}

std::string FloatRangeMessage(std::string_view literal) {
  return "float " + ShortenLiteral(literal) + " does not fit in 64 bits";
}

}  // namespace easyplan
