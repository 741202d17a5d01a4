#include "api/json_text.h"

#include <fmt/format.h>

#include <vector>

#include "core/json.h"

namespace easyplan::api {

std::string Quoted(const std::string& text) { return Json(text).dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string SpecJson(const PartitionSpec& spec) { return spec.ToJson().dump(); }

std::string DimsJson(std::span<const int64_t> dims) { return "[" + fmt::format("{}", fmt::join(dims, ", ")) + "]"; }

std::string MeshJson(const Mesh& mesh) {
  std::vector<std::string> names;
  for (const std::string& name : mesh.axis_names) names.push_back(Quoted(name));
  std::string out = fmt::format("{{\"axis_names\": [{}], \"shape\": {}, \"devices\": {}", fmt::join(names, ", "),
                                DimsJson(mesh.shape), mesh.NumDevices());
  if (!mesh.dcn_shape.empty()) out += ", \"dcn_shape\": " + DimsJson(mesh.dcn_shape);
  return out + "}";
}

}  // namespace easyplan::api
