#include "api/tree_document.h"

#include <fmt/format.h>

#include "api/json_text.h"
#include "core/tree_json.h"

namespace easyplan::api {

Json TreeToJson(const ParamTree& tree, const TreeTotals& totals, const std::string& easydel_version) {
  Json json = Json::object();
  json["model_type"] = tree.model_type;
  if (!easydel_version.empty()) json["easydel_version"] = easydel_version;
  json["layout"] = std::string(LayoutName(tree.layout));
  Json params = Json::array();
  for (const TensorEntry& tensor : tree.tensors) {
    Json entry = Json::object();
    entry["name"] = tensor.name;
    entry["shape"] = Json(std::vector<int64_t>(tensor.shape.dims().begin(), tensor.shape.dims().end()));
    entry["dtype"] = std::string(DTypeName(tensor.dtype));
    if (tensor.role != TensorRole::kParameter) entry["role"] = std::string(TensorRoleName(tensor.role));
    params.push_back(std::move(entry));
  }
  json["params"] = std::move(params);
  json["total_tensors"] = totals.tensors;
  json["total_params"] = totals.params;
  json["total_bytes"] = totals.bytes;
  return json;
}

std::string TreeToJsonText(const ParamTree& tree, const TreeTotals& totals, const std::string& easydel_version) {
  std::string out = "{\n";
  out += "  \"model_type\": " + Quoted(tree.model_type) + ",\n";
  if (!easydel_version.empty()) out += "  \"easydel_version\": " + Quoted(easydel_version) + ",\n";
  out += "  \"layout\": \"" + std::string(LayoutName(tree.layout)) + "\",\n";
  out += "  \"params\": [";
  bool first = true;
  for (const TensorEntry& tensor : tree.tensors) {
    out += first ? "\n    " : ",\n    ";
    first = false;
    out += fmt::format("{{\"name\": {}, \"shape\": [{}], \"dtype\": \"{}\"", Quoted(tensor.name),
                       fmt::join(tensor.shape.dims(), ", "), DTypeName(tensor.dtype));
    if (tensor.role != TensorRole::kParameter) out += fmt::format(", \"role\": \"{}\"", TensorRoleName(tensor.role));
    out += "}";
  }
  out += first ? "],\n" : "\n  ],\n";
  out += fmt::format("  \"total_tensors\": {},\n  \"total_params\": {},\n  \"total_bytes\": {}\n}}\n", totals.tensors,
                     totals.params, totals.bytes);
  return out;
}

StatusOr<ParamTree> TreeFromJson(const Json& json, const std::string& file, int64_t max_tensors) {
  return TreeFromJsonValue(json, file, max_tensors);
}

}  // namespace easyplan::api
