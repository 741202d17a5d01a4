#ifndef EASYPLAN_CORE_KEY_TRACKER_H_
#define EASYPLAN_CORE_KEY_TRACKER_H_

// How the JSON and YAML parsers (core/json_parse.h, core/yaml_parse.h) build one object: a repeated
// key is reported once and replaces the earlier value in place, as Python's json does (first
// position, last value), and members are appended in O(1).

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/document.h"
#include "core/json.h"

namespace easyplan {

/// Duplicate-key bookkeeping for one object: call Note() before parsing each member's value.
class KeyTracker {
 public:
  /// Records that `key` (whose member is at `pointer`) was seen; returns the index of its earlier
  /// member, or nullopt for a new key (which will be member number size()). A repeated key replaces
  /// the earlier value in place (Python's json keeps the first position and the last value), so the
  /// positions recorded under it are dropped and the pointer is reported once, with the position of
  /// its first value kept in `first_positions` (so a warning can name both lines).
  std::optional<size_t> Note(const std::string& key, const std::string& pointer,
                             std::map<std::string, Document::Position>* positions, std::vector<std::string>* duplicates,
                             std::map<std::string, Document::Position>* first_positions);

 private:
  struct Member {
    size_t index;
    int repeats;
  };
  std::map<std::string, Member> members_;
};

/// Sets member `key` of the object `object` to `value` in O(1) (nlohmann's ordered_map looks keys up
/// linearly, which makes building an object of n keys O(n^2)): `existing` is what KeyTracker::Note
/// returned for the key.
void SetMember(Json* object, std::optional<size_t> existing, std::string key, Json value);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_KEY_TRACKER_H_
