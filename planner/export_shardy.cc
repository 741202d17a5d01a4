#include "planner/export_shardy.h"

#include <fmt/format.h>

#include "core/status.h"
#include "planner/export_lines.h"

namespace easyplan::planner {
namespace {

// An MLIR string literal: quotes and backslashes escaped, control bytes as \XX hex.
std::string Quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\{:02X}", byte);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string AxisRefText(const SdyAxisRef& ref) {
  std::string text = Quote(ref.name);
  if (ref.sub_axis) text += fmt::format(":({}){}", ref.sub_axis->first, ref.sub_axis->second);
  return text;
}

std::string AxisListText(const std::vector<SdyAxisRef>& refs) {
  std::vector<std::string> parts;
  for (const SdyAxisRef& ref : refs) parts.push_back(AxisRefText(ref));
  return fmt::format("{{{}}}", fmt::join(parts, ", "));
}

std::string DimText(const SdyDimSharding& dim) {
  std::vector<std::string> parts;
  for (const SdyAxisRef& ref : dim.axes) parts.push_back(AxisRefText(ref));
  if (dim.open) parts.push_back("?");
  std::string text = fmt::format("{{{}}}", fmt::join(parts, ", "));
  if (dim.priority) text += "p" + std::to_string(*dim.priority);
  return text;
}

bool IsIota(const std::vector<int64_t>& ids) {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

}  // namespace

std::string SdyMeshAttrText(const SdyMesh& mesh) {
  std::vector<std::string> axes;
  for (const auto& [name, size] : mesh.axes) axes.push_back(Quote(name) + "=" + std::to_string(size));
  std::string text = fmt::format("<[{}]", fmt::join(axes, ", "));
  if (!mesh.device_ids.empty() && (mesh.axes.empty() || !IsIota(mesh.device_ids))) {
    text += fmt::format(", device_ids=[{}]", fmt::join(mesh.device_ids, ", "));
  }
  return text + ">";
}

std::string SdyTensorShardingBody(const SdyTensorSharding& sharding) {
  std::vector<std::string> dims;
  for (const SdyDimSharding& dim : sharding.dims) dims.push_back(DimText(dim));
  std::string text = "<";
  text += sharding.inline_mesh ? "mesh" + SdyMeshAttrText(*sharding.inline_mesh) : "@" + sharding.mesh_name;
  text += fmt::format(", [{}]", fmt::join(dims, ", "));
  if (!sharding.replicated.empty()) text += ", replicated=" + AxisListText(sharding.replicated);
  if (!sharding.unreduced.empty()) text += ", unreduced=" + sharding.unreduced_kind + AxisListText(sharding.unreduced);
  return text + ">";
}

SdyMesh SdyMeshOf(const Mesh& mesh) {
  SdyMesh out;
  for (size_t k = 0; k < mesh.shape.size(); ++k) out.axes.emplace_back(mesh.axis_names[k], mesh.shape[k]);
  return out;
}

std::string SdyMeshDefinition(const Mesh& mesh, std::string_view name) {
  return "sdy.mesh @" + std::string(name) + " = " + SdyMeshAttrText(SdyMeshOf(mesh));
}

std::string SdyShardingAttr(const PartitionSpec& spec, int rank, std::string_view mesh_name) {
  EP_CHECK(spec.size() <= rank, "spec " + spec.ToString() + " is longer than rank " + std::to_string(rank));
  SdyTensorSharding sharding;
  sharding.mesh_name = std::string(mesh_name);
  sharding.dims.resize(static_cast<size_t>(rank));
  for (int d = 0; d < spec.size(); ++d) {
    for (const std::string& axis : spec[d]) sharding.dims[static_cast<size_t>(d)].axes.push_back({axis, std::nullopt});
  }
  return "#sdy.sharding" + SdyTensorShardingBody(sharding);
}

std::string ShardyExport(const Plan& plan, const ParamTree& tree, bool json) {
  std::vector<std::pair<std::string, std::string>> rows;
  rows.reserve(plan.params.size());
  for (const ParamPlan& param : plan.params) {
    const TensorEntry& tensor = tree.tensors[static_cast<size_t>(param.tensor)];
    rows.emplace_back(tensor.name, SdyShardingAttr(param.effective, tensor.shape.rank()));
  }
  const std::string mesh = SdyMeshDefinition(plan.mesh);
  return ShardingListText(json, Json(mesh), mesh, rows);
}

}  // namespace easyplan::planner
