#ifndef EASYPLAN_TESTS_TEST_UTIL_JSON_SCHEMA_H_
#define EASYPLAN_TESTS_TEST_UTIL_JSON_SCHEMA_H_

// A small JSON Schema validator for the schemas under schemas/json: the project has no JSON Schema
// library, and the schemas use only a subset of draft 2020-12: type, enum, required, properties,
// additionalProperties (false or a schema), items, min/maxItems, minimum, minLength, anyOf, oneOf and
// local $ref ("#/$defs/NAME").

#include <string>
#include <vector>

#include "core/json.h"

namespace easyplan::testing {

/// Validates `value` against `schema` (a part of `root`, which holds the $defs); appends one message
/// per violation, naming the JSON pointer.
void ValidateJsonSchema(const Json& root, const Json& schema, const Json& value, const std::string& pointer,
                        std::vector<std::string>& errors);

/// The `--format json` goldens under tests/golden/<command> that exited 0: their stdout, or the files
/// they wrote.
std::vector<std::string> GoldenJsonOutputs(const std::string& command);

}  // namespace easyplan::testing

#endif  // EASYPLAN_TESTS_TEST_UTIL_JSON_SCHEMA_H_
