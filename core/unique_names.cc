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
  // At most 70% full: linear probing stays short, and the table stays small enough to stay in cache.
  std::vector<Slot> slots(std::bit_ceil(std::max<size_t>(16, count + count / 2 + 1)));
  const size_t mask = slots.size() - 1;
  // Hashes first, in one sequential pass; then the inserts, each prefetching the slot a few names
  // ahead, so the table's cache misses overlap instead of stalling one after another.
  std::vector<uint64_t> hashes(count);
  for (size_t i = 0; i < count; ++i) hashes[i] = HashBytes(name_of(i));
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < count; ++i) {
    if (i + kAhead < count) __builtin_prefetch(&slots[hashes[i + kAhead] & mask]);
    const uint64_t hash = hashes[i];
    const auto high = static_cast<uint32_t>(hash >> 32);
    for (size_t s = hash & mask;; s = (s + 1) & mask) {
      Slot& slot = slots[s];
      if (slot.index == 0) {
        slot = Slot{high, static_cast<uint32_t>(i + 1)};
        break;
      }
      if (slot.hash == high && hashes[slot.index - 1] == hash && name_of(slot.index - 1) == name_of(i)) return i;
    }
  }
  return std::nullopt;
}

}  // namespace easyplan
