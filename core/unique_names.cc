#include "core/unique_names.h"

#include <algorithm>
#include <bit>

namespace easyplan {

UniqueNames::UniqueNames(size_t expected) { slots_.resize(std::bit_ceil(std::max<size_t>(16, expected * 2))); }

bool UniqueNames::Insert(std::string_view name) {
  if ((count_ + 1) * 2 > slots_.size()) Grow();
  const uint64_t hash = std::hash<std::string_view>{}(name);
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (!slot.used) {
      slot = Slot{hash, name, true};
      ++count_;
      return true;
    }
    if (slot.hash == hash && slot.name == name) return false;
  }
}

void UniqueNames::Grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.size() * 2, Slot{});
  const size_t mask = slots_.size() - 1;
  for (const Slot& slot : old) {
    if (!slot.used) continue;
    size_t i = slot.hash & mask;
    while (slots_[i].used) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

}  // namespace easyplan
