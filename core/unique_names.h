#ifndef EASYPLAN_CORE_UNIQUE_NAMES_H_
#define EASYPLAN_CORE_UNIQUE_NAMES_H_

// Finds a repeated name among many (a tree's tensor names) in one pass, without a node per name: an
// open-addressing table of 8-byte slots (32 bits of hash, 32 bits of index) over names the caller
// keeps. A tree of 92k names costs one 1 MiB allocation instead of 92k nodes, and linear time.

#include <cstddef>
#include <functional>
#include <optional>
#include <string_view>

namespace easyplan {

/// The index of the first of `count` names that equals an earlier one, or nullopt when all differ.
/// `name_of(i)` gives name i; it is called O(count) times.
std::optional<size_t> FirstDuplicateName(size_t count, const std::function<std::string_view(size_t)>& name_of);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_UNIQUE_NAMES_H_
