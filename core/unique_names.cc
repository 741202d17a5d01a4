#include "core/unique_names.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <unordered_set>
#include <vector>

#include "core/fast_hash.h"

namespace easyplan {

std::optional<size_t> FirstDuplicateName(size_t count, const std::function<std::string_view(size_t)>& name_of) {
  if (count >= std::numeric_limits<uint32_t>::max()) {
    // Beyond 32-bit indices (a tree no input limit admits by default): the node-based set.
    std::unordered_set<std::string_view> seen;
    for (size_t i = 0; i < count; ++i) {
      if (!seen.insert(name_of(i)).second) return i;
    }
    return std::nullopt;
  }
  struct Slot {
    uint32_t hash = 0;   // the high half of the name's hash
    uint32_t index = 0;  // 1 + the name's index; 0 = empty
  };
  // At most 75% full: linear probing stays short, and the table (1 MiB for 92k names) stays small;
  // every page of it is a page the kernel must zero first.
  std::vector<Slot> slots(std::bit_ceil(std::max<size_t>(16, count + count / 3 + 1)));
  const size_t mask = slots.size() - 1;
  // Each name is hashed kAhead names before its insert, and its slot prefetched then, so the table's
  // cache misses overlap instead of stalling one after another; the hashes wait in a small ring.
  constexpr size_t kAhead = 16;
  uint64_t ahead[kAhead];
  for (size_t i = 0; i < std::min(count, kAhead); ++i) ahead[i] = HashBytes(name_of(i));
  for (size_t i = 0; i < count; ++i) {
    const uint64_t hash = ahead[i % kAhead];
    if (i + kAhead < count) {
      const uint64_t next = HashBytes(name_of(i + kAhead));
      ahead[i % kAhead] = next;
      __builtin_prefetch(&slots[next & mask]);
    }
    const auto high = static_cast<uint32_t>(hash >> 32);
    for (size_t s = hash & mask;; s = (s + 1) & mask) {
      Slot& slot = slots[s];
      if (slot.index == 0) {
        slot = Slot{high, static_cast<uint32_t>(i + 1)};
        break;
      }
      if (slot.hash == high && name_of(slot.index - 1) == name_of(i)) return i;
    }
  }
  return std::nullopt;
}

}  // namespace easyplan
