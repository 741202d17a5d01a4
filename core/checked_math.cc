#include "core/checked_math.h"

namespace easyplan {

std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  return sum;
}

std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

std::optional<int64_t> CheckedProduct(std::span<const int64_t> values) {
  int64_t product = 1;
  for (int64_t value : values) {
    if (__builtin_mul_overflow(product, value, &product)) return std::nullopt;
  }
  return product;
}

std::optional<int64_t> CheckedFromDouble(double value) {
  // -2^63 is exact in a double and in int64; 2^63 is the first double past INT64_MAX.
  constexpr double kTwo63 = 9223372036854775808.0;
  if (!(value >= -kTwo63 && value < kTwo63)) return std::nullopt;  // NaN fails both
  return static_cast<int64_t>(value);
}

}  // namespace easyplan
