#ifndef EASYPLAN_CORE_NUMBER_LITERAL_H_
#define EASYPLAN_CORE_NUMBER_LITERAL_H_

// Number literals as the JSON and YAML parsers (core/json_parse.h, core/yaml_parse.h) read them:
// both convert decimal floats the same way and word their range errors the same way.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace easyplan {

inline bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsAsciiAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/// A literal for a message: at most 40 characters, longer ones cut with "...".
std::string ShortenLiteral(std::string_view text);

/// Parses a decimal float literal in JSON/YAML syntax (a leading '+' is allowed). nullopt when it
/// overflows a double; underflow gives a (signed) zero or subnormal, as strtod does.
/// REQUIRES: `literal` is a well-formed literal (checked by the caller's grammar).
std::optional<double> ParseDecimalFloat(std::string_view literal);

/// A list of plain decimal integers joined by `separator` ("9,8,8,7", "4x4x8"): digits only (no sign, base
/// prefix or space; docs/RELIABILITY.md), each fitting in 64 bits. nullopt on an empty item or anything
/// else, with `bad_item` (when given) set to the first item that is not one. "" is an empty list.
std::optional<std::vector<int64_t>> ParseDecimalList(std::string_view text, char separator,
                                                     std::string_view* bad_item = nullptr);

/// "integer <literal> does not fit in 64 bits".
std::string IntegerRangeMessage(std::string_view literal);

/// "float <literal> does not fit in 64 bits".
std::string FloatRangeMessage(std::string_view literal);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_NUMBER_LITERAL_H_
