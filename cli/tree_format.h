#ifndef EASYPLAN_CLI_TREE_FORMAT_H_
#define EASYPLAN_CLI_TREE_FORMAT_H_

// Output formats of `easyplan tree` for people and spreadsheets: an aligned table and CSV. The JSON
// form lives in api/tree_document.h.

#include <string>

#include "api/tree_document.h"
#include "core/json.h"
#include "core/param_tree.h"
#include "core/tree_diff.h"

namespace easyplan::cli {

using api::TreeToJsonText;

/// name, shape, dtype, numel, bytes, aligned; then "N tensors, P parameters, 16.1 GB".
std::string TreeToTable(const ParamTree& tree, const TreeTotals& totals);

/// RFC 4180 CSV with a header row and a final "total" row (numel column = parameters).
std::string TreeToCsv(const ParamTree& tree, const TreeTotals& totals);

/// `tree --diff`: one line per difference, then the counts and the verdict.
std::string DiffToText(const TreeDiff& diff);

}  // namespace easyplan::cli

#endif  // EASYPLAN_CLI_TREE_FORMAT_H_
