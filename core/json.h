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

/// Compact one-line rendering for messages: strings quoted, long values shortened with "...".
std::string JsonForMessage(const Json& value, size_t max_chars = 60);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_JSON_H_
