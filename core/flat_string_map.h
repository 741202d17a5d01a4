#ifndef EASYPLAN_CORE_FLAT_STRING_MAP_H_
#define EASYPLAN_CORE_FLAT_STRING_MAP_H_

// An insert-only map from byte-string keys to values, for tables that are looked up far more often
// than they grow: the planner looks up each of a tree's 92k tensors among a few hundred keys. Keys
// and values sit in one vector in insertion order; a power-of-two array of 32-bit slots, at most
// half full, indexes them by HashBytes with linear probing. A lookup is one hash, one or two slot
// reads, a comparison of the stored 64-bit hash and then of the key: no node per key, no chain.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/fast_hash.h"

namespace easyplan {

template <typename Value>
class FlatStringMap {
 public:
  /// The value stored under `key`, or null. Valid until the next Insert.
  const Value* Find(std::string_view key) const {
    if (slots_.empty()) return nullptr;
    const uint64_t hash = HashBytes(key);
    const size_t mask = slots_.size() - 1;
    for (size_t s = hash & mask;; s = (s + 1) & mask) {
      const uint32_t slot = slots_[s];
      if (slot == 0) return nullptr;
      const Entry& entry = entries_[slot - 1];
      if (entry.hash == hash && entry.key == key) return &entry.value;
    }
  }

  /// Stores `value` under `key`, which must not be present yet (Find first).
  void Insert(std::string key, Value value) {
    const uint64_t hash = HashBytes(key);
    if ((entries_.size() + 1) * 2 > slots_.size()) Grow();
    entries_.push_back(Entry{hash, std::move(key), std::move(value)});
    Place(hash, static_cast<uint32_t>(entries_.size()));
  }

  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    uint64_t hash;
    std::string key;
    Value value;
  };

  void Place(uint64_t hash, uint32_t slot_value) {
    const size_t mask = slots_.size() - 1;
    size_t s = hash & mask;
    while (slots_[s] != 0) s = (s + 1) & mask;
    slots_[s] = slot_value;
  }

  void Grow() {
    slots_.assign(slots_.empty() ? 16 : slots_.size() * 2, 0);
    for (size_t i = 0; i < entries_.size(); ++i) Place(entries_[i].hash, static_cast<uint32_t>(i + 1));
  }

  std::vector<Entry> entries_;
  std::vector<uint32_t> slots_;  // 1 + index into entries_; 0 = empty
};

}  // namespace easyplan

#endif  // EASYPLAN_CORE_FLAT_STRING_MAP_H_
