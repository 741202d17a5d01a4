#ifndef EASYPLAN_CORE_CHECKED_MATH_H_
#define EASYPLAN_CORE_CHECKED_MATH_H_

// Overflow-checked int64 arithmetic for sizes, dims and byte counts: every product of dims goes
// through CheckedMul / CheckedProduct, and an overflow becomes a message instead of a wrong number.

#include <cstdint>
#include <optional>
#include <span>

namespace easyplan {

/// a + b, or nullopt when the exact sum does not fit in int64_t.
std::optional<int64_t> CheckedAdd(int64_t a, int64_t b);

/// a * b, or nullopt when the exact product does not fit in int64_t.
std::optional<int64_t> CheckedMul(int64_t a, int64_t b);

/// The product of all values (1 for an empty span), or nullopt when any partial product overflows.
/// A zero anywhere gives 0 only if no earlier partial product overflowed: {2^62, 4, 0} is nullopt.
std::optional<int64_t> CheckedProduct(std::span<const int64_t> values);

/// `value` as int64 when it is finite and within int64's range (truncated toward zero), else nullopt:
/// a double past 2^63 converted with static_cast or llround is undefined behaviour.
std::optional<int64_t> CheckedFromDouble(double value);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_CHECKED_MATH_H_
