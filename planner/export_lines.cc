#include "planner/export_lines.h"

#include "core/emit.h"

namespace easyplan::planner {

std::string ShardingListText(bool json, const Json& mesh, const std::string& first_line,
                             const std::vector<std::pair<std::string, std::string>>& rows) {
  if (json) {
    Json out = Json::object();
    out["mesh"] = mesh;
    Json params = Json::array();
    for (const auto& [name, sharding] : rows) {
      Json row = Json::object();
      row["name"] = name;
      row["sharding"] = sharding;
      params.push_back(std::move(row));
    }
    out["params"] = std::move(params);
    return EmitJson(out);
  }
  std::string text = first_line.empty() ? "" : first_line + "\n";
  for (const auto& [name, sharding] : rows) text += name + "\t" + sharding + "\n";
  return text;
}

}  // namespace easyplan::planner
