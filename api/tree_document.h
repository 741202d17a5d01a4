#ifndef EASYPLAN_API_TREE_DOCUMENT_H_
#define EASYPLAN_API_TREE_DOCUMENT_H_

// A parameter tree as JSON: the shape of schemas/json/tree.schema.json, which `tree --format json`
// prints, `--tree FILE` reads back, and the Python module returns.

#include <string>

#include "core/json.h"
#include "core/param_tree.h"

namespace easyplan::api {

/// {"model_type", "layout", "params": [{"name", "shape", "dtype"[, "role"]}...], "total_tensors",
/// "total_params", "total_bytes"}; "role" appears only for buffers and scales.
Json TreeToJson(const ParamTree& tree, const TreeTotals& totals, const std::string& easydel_version = "");

/// TreeToJson as text: two-space indentation with one line per tensor, so a 90k-tensor tree stays
/// greppable and diffable (and is written without building a Json value per tensor).
std::string TreeToJsonText(const ParamTree& tree, const TreeTotals& totals, const std::string& easydel_version = "");

/// Parses the JSON shape above (a user's own tree, dumped from JAX or PyTorch). Errors name `file`,
/// the JSON pointer and the tensor. Same as core/tree_json.h's TreeFromJsonValue; to read a file use
/// ParseTreeJson there (fast, and errors with line:column).
StatusOr<ParamTree> TreeFromJson(const Json& json, const std::string& file, int64_t max_tensors);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_TREE_DOCUMENT_H_
