#ifndef EASYPLAN_CORE_FAST_HASH_H_
#define EASYPLAN_CORE_FAST_HASH_H_

// A fast 64-bit hash of a byte string, for in-memory hash tables that compare keys on a hash match.
// It is not stable across versions and not meant for files, fingerprints or adversarial input.
//
// Why not std::hash: libstdc++'s murmur-style hash mixes eight bytes per step through a chain of
// multiplies; planning DeepSeek-V3's 92k tensors hashes ~7 MB of keys and tensor names, and that
// chain was 8% of `validate`'s wall time. This one takes sixteen bytes per step, each step a single
// 64 x 64 -> 128-bit multiply whose two halves are folded together, and reads short tails with two
// overlapping loads instead of a byte loop.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace easyplan {
namespace fast_hash_internal {

inline constexpr uint64_t kMix0 = 0x9E3779B97F4A7C15ULL;  // 2^64 / golden ratio
inline constexpr uint64_t kMix1 = 0xC2B2AE3D27D4EB4FULL;
inline constexpr uint64_t kMix2 = 0x165667B19E3779F9ULL;

inline uint64_t Load64(const char* p) {
  uint64_t value;
  std::memcpy(&value, p, sizeof(value));
  return value;
}

inline uint64_t Load32(const char* p) {
  uint32_t value;
  std::memcpy(&value, p, sizeof(value));
  return value;
}

__extension__ typedef unsigned __int128 Uint128;  // GCC and Clang; __extension__ keeps -Wpedantic quiet

// The high and low halves of a * b, folded: every input bit reaches the middle of the result.
inline uint64_t Fold(uint64_t a, uint64_t b) {
  const Uint128 product = static_cast<Uint128>(a) * b;
  return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}

}  // namespace fast_hash_internal

inline uint64_t HashBytes(std::string_view bytes, uint64_t seed = 0) {
  using namespace fast_hash_internal;
  const char* p = bytes.data();
  size_t n = bytes.size();
  uint64_t h = seed ^ Fold(n ^ kMix0, kMix1);
  while (n > 16) {
    h = Fold(Load64(p) ^ kMix1, Load64(p + 8) ^ h);
    p += 16;
    n -= 16;
  }
  // The last 1..16 bytes (none for an empty string), read as two possibly overlapping words; the
  // length, mixed in above, tells apart the tails that overlap differently.
  uint64_t a = 0, b = 0;
  if (n >= 8) {
    a = Load64(p);
    b = Load64(p + n - 8);
  } else if (n >= 4) {
    a = Load32(p);
    b = Load32(p + n - 4);
  } else if (n > 0) {
    a = (uint64_t{static_cast<unsigned char>(p[0])} << 16) | (uint64_t{static_cast<unsigned char>(p[n / 2])} << 8) |
        static_cast<unsigned char>(p[n - 1]);
  }
  return Fold(Fold(a ^ kMix2, b ^ h), h ^ kMix0);
}

}  // namespace easyplan

#endif  // EASYPLAN_CORE_FAST_HASH_H_
