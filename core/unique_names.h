#ifndef EASYPLAN_CORE_UNIQUE_NAMES_H_
#define EASYPLAN_CORE_UNIQUE_NAMES_H_

// Finds a repeated name among many (a tree's tensor names) in one pass, without a node per name: an
// open-addressing table of (hash, index) over names the caller keeps alive. A tree of 92k names costs
// one allocation instead of 92k, and linear time instead of a sort.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace easyplan {

class UniqueNames {
 public:
  /// Room for `expected` names without growing (the table keeps at most half its slots full).
  explicit UniqueNames(size_t expected);

  /// Adds `name` (which must outlive this object). False when an equal name was added before.
  bool Insert(std::string_view name);

 private:
  void Grow();

  struct Slot {
    uint64_t hash = 0;
    std::string_view name;
    bool used = false;
  };
  std::vector<Slot> slots_;  // size is a power of two
  size_t count_ = 0;
};

}  // namespace easyplan

#endif  // EASYPLAN_CORE_UNIQUE_NAMES_H_
