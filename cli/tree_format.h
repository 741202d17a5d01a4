#ifndef EASYPLAN_CLI_TREE_FORMAT_H_
#define EASYPLAN_CLI_TREE_FORMAT_H_

// Output formats of `easyplan tree`: an aligned table for people, JSON for machines (the shape of
// schemas/json/tree.schema.json, which `--tree FILE` reads back), CSV for spreadsheets.

#include <string>

#include "core/json.h"
#include "core/param_tree.h"

namespace easyplan::cli {

/// {"model_type", "layout", "params": [{"name", "shape", "dtype"[, "role"]}...], "total_tensors",
/// "total_params", "total_bytes"}; "role" appears only for buffers and scales.
Json TreeToJson(const ParamTree& tree, const TreeTotals& totals);

/// TreeToJson as text: two-space indentation with one line per tensor, so a 90k-tensor tree stays
/// greppable and diffable (and is written without building a Json value per tensor).
std::string TreeToJsonText(const ParamTree& tree, const TreeTotals& totals);

/// name, shape, dtype, numel, bytes, aligned; then "N tensors, P parameters, 16.1 GB".
std::string TreeToTable(const ParamTree& tree, const TreeTotals& totals);

/// RFC 4180 CSV with a header row and a final "total" row (numel column = parameters).
std::string TreeToCsv(const ParamTree& tree, const TreeTotals& totals);

/// Parses the JSON shape above (a user's own tree, dumped from JAX or PyTorch). Errors name `file`,
/// the JSON pointer and the tensor. Same as core/tree_json.h's TreeFromJsonValue; to read a file use
/// ParseTreeJson there (fast, and errors with line:column).
StatusOr<ParamTree> TreeFromJson(const Json& json, const std::string& file, int64_t max_tensors);

}  // namespace easyplan::cli

#endif  // EASYPLAN_CLI_TREE_FORMAT_H_
