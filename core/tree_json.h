#ifndef EASYPLAN_CORE_TREE_JSON_H_
#define EASYPLAN_CORE_TREE_JSON_H_

// Reading a parameter tree back from its JSON form (the `easyplan tree --format json` shape,
// schemas/json/tree.schema.json): {"model_type", "layout", "params": [{"name", "shape", "dtype"[,
// "role"]}...], and optional "total_tensors", "total_params", "total_bytes"}. The totals are not
// read (they are recomputed). Unknown keys are ignored.
//
// Two readers give the same answers:
//  - the reference path: ParseJsonDocument (positions for every value) + TreeFromJsonValue, whose
//    errors name file:line:col, the JSON pointer and the tensor; it costs ~15 us per tensor, mostly
//    for recording positions;
//  - ParseTreeJson tries the scanner first (core/tree_json_scan.h, ~0.04 us per tensor), which reads
//    straight into a ParamTree every tree without escapes or unknown keys and accepts only what it
//    can prove valid. Anything else (an error, an escape in a tensor name, a duplicate or unknown
//    key, a limit) is handed to the reference path, so the tree, the error message and its position
//    are always the reference path's.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/json.h"
#include "core/limits.h"
#include "core/param_tree.h"
#include "core/status.h"

namespace easyplan {

/// The tree in a parsed JSON value. Errors are BadInput at {file, JSON pointer} (no line:column):
/// not an object, a bad model_type/layout, "/params" missing or not a list, more than `max_tensors`
/// tensors, and per tensor: not an object, an empty or missing name, a name seen twice, a shape that
/// is not a list of non-negative int64s, a missing or unknown dtype (with a did-you-mean), a role other
/// than "parameter", "buffer" or "scale".
StatusOr<ParamTree> TreeFromJsonValue(const Json& json, const std::string& file, int64_t max_tensors);

/// The reference path: ParseJsonDocument(text, file, limits) then TreeFromJsonValue, with the error's
/// line:column filled in from the document's positions.
StatusOr<ParamTree> ParseTreeJsonDocument(std::string_view text, const std::string& file, const Limits& limits,
                                          int64_t max_tensors);

/// The same result as ParseTreeJsonDocument, fast for every tree the scanner reads.
StatusOr<ParamTree> ParseTreeJson(std::string_view text, const std::string& file, const Limits& limits,
                                  int64_t max_tensors);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_TREE_JSON_H_
