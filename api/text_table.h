#ifndef EASYPLAN_API_TEXT_TABLE_H_
#define EASYPLAN_API_TEXT_TABLE_H_

// Aligned text tables for the terminal forms of plan, activations, memory, cost and suggest.

#include <cstddef>
#include <string>
#include <vector>

namespace easyplan::api {

/// Rows of cells as aligned columns two spaces apart, each line prefixed by `indent`: left-aligned
/// except the columns listed in `right_aligned` (figures), trailing blanks cut.
std::string Columns(const std::vector<std::vector<std::string>>& rows, const std::vector<size_t>& right_aligned,
                    const std::string& indent = "");

}  // namespace easyplan::api

#endif  // EASYPLAN_API_TEXT_TABLE_H_
