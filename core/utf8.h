#ifndef EASYPLAN_CORE_UTF8_H_
#define EASYPLAN_CORE_UTF8_H_

// Well-formed UTF-8, as every reader of text in easyplan checks it (RFC 3629): the JSON parser's
// strings, the tree scanner's tensor names, YAML scalars on the way to JSON.

#include <cstddef>
#include <string_view>

namespace easyplan {

/// Length of the well-formed UTF-8 sequence starting at text[i] (1 to 4), or 0 if it is not one
/// (overlong forms, surrogates and code points above U+10FFFF are rejected). REQUIRES: i < size.
size_t Utf8SequenceLength(std::string_view text, size_t i);

/// True when all of `text` is well-formed UTF-8.
bool IsValidUtf8(std::string_view text);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_UTF8_H_
