#ifndef EASYPLAN_CORE_JSON_H_
#define EASYPLAN_CORE_JSON_H_

// The one JSON value type of easyplan: nlohmann's ordered_json, which keeps object keys in insertion
// order (file order for parsed documents), so every output is deterministic. Only core/ parses or
// serialises text; other modules use this alias and the helpers below.
#include <nlohmann/json.hpp>

namespace easyplan {

using Json = nlohmann::ordered_json;

/// "integer", "float", "string", "boolean", "null", "object" or "array": the words our messages use.
const char* JsonTypeName(const Json& value);

/// Appends member `key` to `object` without looking for an existing one: ordered_json's own
/// insertion searches the members linearly, which makes building an n-key object O(n^2).
/// REQUIRES: object.is_object() and it has no member named `key`.
void AppendMember(Json& object, std::string key, Json value);

/// Compact one-line rendering for messages: strings quoted, long values shortened with "...", a
/// non-finite float in YAML's spelling (.inf, -.inf, .nan) where JSON would write null.
std::string JsonForMessage(const Json& value, size_t max_chars = 60);

/// What a message says was found: "-3" for integers, "string \"4\"" / "float 2.5" / "array [1, 2]"
/// for everything else.
std::string DescribeFound(const Json& value);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_JSON_H_
