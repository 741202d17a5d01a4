#ifndef EASYPLAN_API_TREE_TEXT_H_
#define EASYPLAN_API_TREE_TEXT_H_

// The terminal forms of `easyplan tree` for people and spreadsheets: an aligned table and CSV, and the
// diff between template and checkpoint as text. The JSON form lives in api/tree_document.h.

#include <string>

#include "core/param_tree.h"
#include "core/tree_diff.h"

namespace easyplan::api {

/// name, shape, dtype, numel, bytes, aligned; then "N tensors, P parameters, 16.1 GB".
std::string TreeToTable(const ParamTree& tree, const TreeTotals& totals);

/// RFC 4180 CSV with a header row and a final "total" row (numel column = parameters).
std::string TreeToCsv(const ParamTree& tree, const TreeTotals& totals);

/// `tree --diff`: one line per difference, then the counts and the verdict.
std::string DiffToText(const TreeDiff& diff);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_TREE_TEXT_H_
