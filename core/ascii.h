#ifndef EASYPLAN_CORE_ASCII_H_
#define EASYPLAN_CORE_ASCII_H_

// ASCII case folding, independent of the C locale (output must not change with LC_ALL; see
// docs/RELIABILITY.md, "Output safety").

#include <string>
#include <string_view>

namespace easyplan {

inline char AsciiLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

/// `text` with A-Z lowered; every other byte (UTF-8 included) as it is.
inline std::string AsciiLowered(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

}  // namespace easyplan

#endif  // EASYPLAN_CORE_ASCII_H_
