#ifndef EASYPLAN_CORE_SCRIPT_JSON_H_
#define EASYPLAN_CORE_SCRIPT_JSON_H_

// JSON text made safe to place inside an HTML <script> element (the report's data, api/report.cc).
// The HTML tokenizer reads a script's text before any JSON parser does, and more than "</script"
// changes its state: "<!--" enters the escaped state, where "<script" then enters the double-escaped
// state, in which "</script>" no longer ends the element, so the rest of the page becomes script text
// and the page is blank (HTML Living Standard, 13.2.5.4 "Script data state" and the states after
// it). Escaping every '<', '>' and '&' as \u003c, \u003e, \u0026 leaves the tokenizer nothing to act
// on in any of those states; U+2028 and U+2029 become \u2028 and \u2029, which JavaScript before
// ES2019 does not accept raw in a string literal, should the data ever be evaluated as script. The
// escapes are JSON's own, so JSON.parse returns the same strings.

#include <string>
#include <string_view>

namespace easyplan {

/// `json` (a JSON document, as nlohmann's dump() writes it) with '<', '>', '&', U+2028 and U+2029
/// written as \uXXXX escapes. These characters can only occur inside JSON strings, where the escape
/// means the same character, so the result parses to the same value.
std::string JsonForScriptElement(std::string_view json);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_SCRIPT_JSON_H_
