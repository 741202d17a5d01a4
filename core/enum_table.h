#ifndef EASYPLAN_CORE_ENUM_TABLE_H_
#define EASYPLAN_CORE_ENUM_TABLE_H_

// An enum's names written once, as a table of {value, name} rows, from which both directions come:
// NameOf (value -> name) and ParseEnum (name -> value), so a name switch and a parse loop can never
// disagree (issue 46). A value may have more than one row: its first row is its name, the later ones
// aliases that parse to it (EasyDeL's constants, the old spellings of a checkpoint policy).

#include <cstddef>
#include <optional>
#include <string_view>

namespace easyplan {

template <typename Enum>
struct EnumName {
  Enum value;
  std::string_view name;
};

/// The name of `value`: its first row's. A value the table lacks (only a cast makes one) names as the
/// table's first row, as the switches this replaces fell back to their first case.
template <typename Enum, size_t N>
constexpr std::string_view NameOf(const EnumName<Enum> (&table)[N], Enum value) {
  for (const EnumName<Enum>& row : table) {
    if (row.value == value) return row.name;
  }
  return table[0].name;
}

/// The value a row names `text` (exactly, case and all); nullopt when none does.
template <typename Enum, size_t N>
constexpr std::optional<Enum> ParseEnum(const EnumName<Enum> (&table)[N], std::string_view text) {
  for (const EnumName<Enum>& row : table) {
    if (row.name == text) return row.value;
  }
  return std::nullopt;
}

}  // namespace easyplan

#endif  // EASYPLAN_CORE_ENUM_TABLE_H_
