#ifndef EASYPLAN_API_ONCE_MAP_H_
#define EASYPLAN_API_ONCE_MAP_H_

// A thread-safe memo: the value of each key is computed once, by the first caller that asks for it,
// while later callers for the same key wait for that result (an error included: a stage that failed
// fails the same way again without being recomputed). Callers for different keys never wait on each
// other's computation. Values are immutable once stored and shared by pointer.

#include <map>
#include <memory>
#include <mutex>

#include "core/status.h"

namespace easyplan::api {

template <typename Key, typename Value>
class OnceMap {
 public:
  /// The value of `key`, computing it with `compute()` (returning StatusOr<Value>) on first use.
  template <typename Compute>
  StatusOr<std::shared_ptr<const Value>> Get(const Key& key, Compute&& compute) const {
    std::shared_ptr<Slot> slot;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      std::shared_ptr<Slot>& found = slots_[key];
      if (!found) found = std::make_shared<Slot>();
      slot = found;
    }
    std::call_once(slot->once, [&] {
      StatusOr<Value> value = compute();
      if (value.ok()) {
        slot->value = std::make_shared<const Value>(std::move(*value));
      } else {
        slot->status = value.status();
      }
    });
    if (!slot->value) return slot->status;
    return slot->value;
  }

 private:
  struct Slot {
    std::once_flag once;
    std::shared_ptr<const Value> value;
    Status status;
  };
  mutable std::mutex mutex_;
  mutable std::map<Key, std::shared_ptr<Slot>> slots_;
};

}  // namespace easyplan::api

#endif  // EASYPLAN_API_ONCE_MAP_H_
