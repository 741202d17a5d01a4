#ifndef EASYPLAN_CORE_TREE_JSON_H_
#define EASYPLAN_CORE_TREE_JSON_H_

// Reading a parameter tree back from its JSON form (the `easyplan tree --format json` shape,
// schemas/json/tree.schema.json): {"model_type", "layout", "params": [{"name", "shape", "dtype"[,
// "role"]}...], and optional "total_tensors", "total_params", "total_bytes"}. The totals are not
// read (they are recomputed). Unknown keys are ignored.
//
// Three readers give the same answers:
//  - the reference path: ParseJsonDocument (positions for every value) + TreeFromJsonValue, whose
//    errors name file:line:col, the JSON pointer and the tensor; it costs ~15 us per tensor, mostly
//    for recording positions;
//  - ParseTreeJson tries two fast readers first, each straight into a ParamTree and each accepting
//    only input it can prove valid: the scanner (core/tree_json_scan.h, ~0.04 us per tensor) for the
//    printable-ASCII subset every tree dump uses, then simdjson's On-Demand parser (~0.1 us per
//    tensor) for any other spelling without escapes. Anything else (an error, an escape in a tensor
//    name, a duplicate or unknown key, a limit) is handed to the reference path, so the tree, the
//    error message and its position are always the reference path's.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/file_system.h"
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

/// The same result as ParseTreeJsonDocument, fast. simdjson reads up to kTreeJsonPadding bytes past the
/// end of the text: `readable` says how many bytes from text.data() may be read (a PaddedText from
/// FileSystem::ReadFilePadded has them, and a std::string its spare capacity); with fewer, the text is
/// copied once.
StatusOr<ParamTree> ParseTreeJson(std::string_view text, size_t readable, const std::string& file, const Limits& limits,
                                  int64_t max_tensors);
StatusOr<ParamTree> ParseTreeJson(const PaddedText& text, const std::string& file, const Limits& limits,
                                  int64_t max_tensors);
StatusOr<ParamTree> ParseTreeJson(const std::string& text, const std::string& file, const Limits& limits,
                                  int64_t max_tensors);
StatusOr<ParamTree> ParseTreeJson(std::string_view text, const std::string& file, const Limits& limits,
                                  int64_t max_tensors);
inline StatusOr<ParamTree> ParseTreeJson(const char* text, const std::string& file, const Limits& limits,
                                         int64_t max_tensors) {
  return ParseTreeJson(std::string_view(text), file, limits, max_tensors);
}

/// Spare bytes the fast path needs after the text (simdjson's SIMDJSON_PADDING).
inline constexpr size_t kTreeJsonPadding = 64;

/// The fast path alone, for tests and benchmarks: true and `*tree` filled when it accepted the text
/// (and then ParseTreeJsonDocument gives the same tree), false when it defers to the reference path.
bool ParseTreeJsonFastPath(std::string_view text, const Limits& limits, int64_t max_tensors, ParamTree* tree);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_TREE_JSON_H_
