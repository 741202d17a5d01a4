#ifndef EASYPLAN_SCHEMAS_OVERRIDES_H_
#define EASYPLAN_SCHEMAS_OVERRIDES_H_

#include <string>
#include <vector>

#include "core/json.h"
#include "core/limits.h"
#include "core/status.h"

namespace easyplan::schemas {

/// Applies one `--set KEY=VALUE`: VALUE is parsed as JSON when it is valid JSON, else taken as a
/// string (`attn_mechanism=ring` works unquoted); a dotted KEY reaches into nested objects, creating
/// them where the path is missing or null (`rope_scaling.factor=8`). Returns the top-level key.
/// Errors (BadInput, location "--set <assignment>", shortened): no '=', an empty key segment, a path
/// through a value that is not an object, an integer beyond int64, a value that with the key's
/// segments nests deeper than limits.max_depth or holds more than limits.max_values values.
StatusOr<std::string> ApplySet(Json& config, const std::string& assignment, const Limits& limits = {});

/// How messages name a --set: "--set " + assignment, shortened to 80 characters of assignment.
std::string SetForMessage(const std::string& assignment);

/// Deep-merges an overrides object into `config`: nested objects merge key by key, any other value
/// (lists included) replaces. Returns the top-level keys it touched, in order.
std::vector<std::string> MergeOverrides(Json& config, const Json& overrides);

}  // namespace easyplan::schemas

#endif  // EASYPLAN_SCHEMAS_OVERRIDES_H_
