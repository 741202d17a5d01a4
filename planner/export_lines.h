#ifndef EASYPLAN_PLANNER_EXPORT_LINES_H_
#define EASYPLAN_PLANNER_EXPORT_LINES_H_

// The shape the per-tensor sharding exports share (xla-hlo, shardy; docs/FORMATS.md): one
// `NAME<TAB>SHARDING` line per tensor, or the same rows as JSON.

#include <string>
#include <utility>
#include <vector>

#include "core/json.h"

namespace easyplan::planner {

/// Text: `first_line` (when not empty) and one `NAME\tSHARDING` line per row. JSON (`json`):
/// {"mesh": mesh, "params": [{"name", "sharding"}, ...]}, as EmitJson writes it.
std::string ShardingListText(bool json, const Json& mesh, const std::string& first_line,
                             const std::vector<std::pair<std::string, std::string>>& rows);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_EXPORT_LINES_H_
