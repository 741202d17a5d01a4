#ifndef EASYPLAN_CORE_ENUM_NAMES_H_
#define EASYPLAN_CORE_ENUM_NAMES_H_

// An enum's names, in the order of its values, from the enum's own name function: what an option's
// choices are made of (api/option_table.cc), so a choice list is never written twice (issue 46).

#include <string_view>
#include <vector>

namespace easyplan {

template <typename Enum, size_t N>
std::vector<std::string_view> EnumNames(const Enum (&values)[N], std::string_view (*name)(Enum)) {
  std::vector<std::string_view> out;
  out.reserve(N);
  for (const Enum value : values) out.push_back(name(value));
  return out;
}

}  // namespace easyplan

#endif  // EASYPLAN_CORE_ENUM_NAMES_H_
