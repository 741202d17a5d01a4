#include "core/key_tracker.h"

#include <utility>

namespace easyplan {

std::optional<size_t> KeyTracker::Note(const std::string& key, const std::string& pointer,
                                       std::map<std::string, Document::Position>* positions,
                                       std::vector<std::string>* duplicates,
                                       std::map<std::string, Document::Position>* first_positions) {
  const auto [it, inserted] = members_.try_emplace(key, Member{members_.size(), 0});
  if (inserted) return std::nullopt;
  if (++it->second.repeats == 1) {
    duplicates->push_back(pointer);
    if (const auto first = positions->find(pointer); first != positions->end()) {
      first_positions->emplace(pointer, first->second);
    }
  }
  positions->erase(pointer);
  // Every pointer below `pointer` sorts in [pointer + "/", pointer + "0") since '0' == '/' + 1.
  positions->erase(positions->lower_bound(pointer + "/"), positions->lower_bound(pointer + "0"));
  return it->second.index;
}

void SetMember(Json* object, std::optional<size_t> existing, std::string key, Json value) {
  if (existing) {
    Json::object_t::Container& members = *object->get_ptr<Json::object_t*>();
    members[*existing].second = std::move(value);
  } else {
    AppendMember(*object, std::move(key), std::move(value));
  }
}

}  // namespace easyplan
