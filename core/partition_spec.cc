#include "core/partition_spec.h"

#include <fmt/format.h>

namespace easyplan {

PartitionSpec::PartitionSpec(std::vector<Entry> entries)
    : entries_(entries.empty() ? nullptr : std::make_shared<const std::vector<Entry>>(std::move(entries))) {}

const std::vector<PartitionSpec::Entry>& PartitionSpec::NoEntries() {
  static const std::vector<Entry> none;
  return none;
}

std::vector<std::string> PartitionSpec::AllAxes() const {
  std::vector<std::string> axes;
  for (const Entry& entry : entries()) axes.insert(axes.end(), entry.begin(), entry.end());
  return axes;
}

bool PartitionSpec::IsReplicated() const {
  for (const Entry& entry : entries()) {
    if (!entry.empty()) return false;
  }
  return true;
}

std::string PartitionSpec::ToString() const {
  std::vector<std::string> parts;
  for (const Entry& entry : entries()) {
    if (entry.empty()) {
      parts.push_back("None");
    } else if (entry.size() == 1) {
      parts.push_back("'" + entry[0] + "'");
    } else {
      std::vector<std::string> quoted;
      for (const std::string& axis : entry) quoted.push_back("'" + axis + "'");
      parts.push_back("(" + fmt::format("{}", fmt::join(quoted, ", ")) + ")");
    }
  }
  return "P(" + fmt::format("{}", fmt::join(parts, ", ")) + ")";
}

Json PartitionSpec::ToJson() const {
  Json json = Json::array();
  for (const Entry& entry : entries()) {
    if (entry.empty()) {
      json.push_back(nullptr);
    } else if (entry.size() == 1) {
      json.push_back(entry[0]);
    } else {
      json.push_back(Json(entry));
    }
  }
  return json;
}

StatusOr<PartitionSpec> PartitionSpec::FromJson(const Json& json) {
  if (!json.is_array()) {
    return Status::BadInput(
        {}, "a partition spec is a list (null, an axis or a list of axes per dim), found " + JsonForMessage(json));
  }
  std::vector<Entry> entries;
  for (const Json& item : json) {
    if (item.is_null()) {
      entries.emplace_back();
    } else if (item.is_string()) {
      entries.push_back({item.get<std::string>()});
    } else if (item.is_array()) {
      Entry entry;
      for (const Json& axis : item) {
        if (!axis.is_string()) {
          return Status::BadInput({}, "a tuple entry of a partition spec holds axis names, found " +
                                          JsonForMessage(axis) + " (tuples cannot nest)");
        }
        entry.push_back(axis.get<std::string>());
      }
      entries.push_back(std::move(entry));
    } else {
      return Status::BadInput(
          {}, "a partition spec entry is null, an axis name or a list of axis names, found " + JsonForMessage(item));
    }
  }
  return PartitionSpec(std::move(entries));
}

}  // namespace easyplan
