#pragma once
// Aligned text tables for the table formats of plan, activations and memory.

#include <cstddef>
#include <string>
#include <vector>

namespace easyplan::cli {

/// Rows of cells as aligned columns two spaces apart, each line prefixed by `indent`: left-aligned
/// except the columns listed in `right_aligned` (figures), trailing blanks cut.
std::string Columns(const std::vector<std::vector<std::string>>& rows, const std::vector<size_t>& right_aligned,
                    const std::string& indent = "");

}  // namespace easyplan::cli
