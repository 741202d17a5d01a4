#include "planner/activation_table.h"

#include <algorithm>

#include "core/document.h"
#include "core/json_pointer.h"
#include "core/yaml_parse.h"
#include "schemas/schema_reader.h"

namespace easyplan::planner {
namespace {

using Axes = ActivationTable::Axes;

const char* const kAttnFieldNames[] = {"query3d", "query",  "key",           "value",          "bias",
                                       "mask",    "output", "q_segment_ids", "kv_segment_ids", "softmax_aux"};

StatusOr<std::vector<std::optional<std::string>>> ParseRoles(const schemas::SchemaReader& reader, const Json& value,
                                                             const std::string& pointer) {
  if (!value.is_array()) return reader.Error(pointer, "expected a list of roles (dp, ep, tp or null)");
  std::vector<std::optional<std::string>> roles;
  for (const Json& entry : value) {
    if (entry.is_null()) {
      roles.emplace_back(std::nullopt);
    } else if (entry.is_string() && (entry == "dp" || entry == "ep" || entry == "tp")) {
      roles.emplace_back(entry.get<std::string>());
    } else {
      return reader.Error(pointer, "a role is dp, ep, tp or null, found " + entry.dump());
    }
  }
  return roles;
}

StatusOr<std::vector<int>> ParseDims(const schemas::SchemaReader& reader, const Json& value,
                                     const std::string& pointer) {
  if (!value.is_array()) return reader.Error(pointer, "expected a list of dim indices");
  std::vector<int> dims;
  for (const Json& dim : value) {
    if (!dim.is_number_integer() || dim.get<int64_t>() < 0 || dim.get<int64_t>() > 7) {
      return reader.Error(pointer, "a dim index is an integer from 0 to 7, found " + dim.dump());
    }
    dims.push_back(dim.get<int>());
  }
  return dims;
}

StatusOr<bool> ParseBool(const schemas::SchemaReader& reader, const Json& object, const char* key, bool fallback,
                         const std::string& pointer) {
  auto it = object.find(key);
  if (it == object.end()) return fallback;
  if (!it->is_boolean()) return reader.Error(PointerToMember(pointer, key), "expected true or false");
  return it->get<bool>();
}

StatusOr<ActivationTable::Kernel> ParseKernel(const schemas::SchemaReader& reader, const std::string& name,
                                              const Json& value, const std::string& pointer) {
  EP_RETURN_IF_ERROR(reader.CheckKeys(value, pointer,
                                      {"easydel", "mode_dim", "layout", "qkv_mni", "shard_map", "corrected",
                                       "transposed", "decode_only", "error", "specs"}));
  ActivationTable::Kernel kernel;
  kernel.name = name;
  const Json aliases = value.value("easydel", Json::array());
  if (!aliases.is_array()) return reader.Error(pointer + "/easydel", "expected a list of attn_mechanism names");
  for (const Json& alias : aliases) {
    if (!alias.is_string()) return reader.Error(pointer + "/easydel", "expected attn_mechanism names");
    kernel.easydel.push_back(alias.get<std::string>());
  }
  const Json mode_dim = value.value("mode_dim", Json(1));
  if (!mode_dim.is_number_integer() || (mode_dim != 1 && mode_dim != 2)) {
    return reader.Error(pointer + "/mode_dim", "get_mode tests dim 1 or 2 of the query");
  }
  kernel.mode_dim = mode_dim.get<int>();
  EP_ASSIGN_OR_RETURN(kernel.layout, reader.String(value, pointer, "layout", false));
  if (kernel.layout.empty()) kernel.layout = "bthd";
  if (kernel.layout != "bthd" && kernel.layout != "bhtd") {
    return reader.Error(pointer + "/layout", "expected bthd or bhtd");
  }
  EP_ASSIGN_OR_RETURN(kernel.qkv_mni, ParseBool(reader, value, "qkv_mni", false, pointer));
  EP_ASSIGN_OR_RETURN(kernel.shard_map, ParseBool(reader, value, "shard_map", true, pointer));
  EP_ASSIGN_OR_RETURN(kernel.corrected, ParseBool(reader, value, "corrected", true, pointer));
  EP_ASSIGN_OR_RETURN(kernel.transposed, ParseBool(reader, value, "transposed", false, pointer));
  EP_ASSIGN_OR_RETURN(kernel.decode_only, ParseBool(reader, value, "decode_only", false, pointer));
  EP_ASSIGN_OR_RETURN(kernel.error, reader.String(value, pointer, "error", false));
  const Json specs = value.value("specs", Json::object());
  if (!specs.is_object() || specs.empty()) return reader.Error(pointer + "/specs", "expected a mapping of specs");
  for (const auto& [spec_name, spec_value] : specs.items()) {
    const std::string spec_pointer = PointerToMember(pointer + "/specs", spec_name);
    EP_RETURN_IF_ERROR(
        reader.CheckKeys(spec_value, spec_pointer, {"field", "keep", "pick", "rank", "flatten", "tensor"}));
    ActivationTable::KernelSpec spec;
    spec.name = spec_name;
    EP_ASSIGN_OR_RETURN(spec.field, reader.String(spec_value, spec_pointer, "field", false));
    if (spec.field.empty() == !spec_value.contains("rank")) {
      return reader.Error(spec_pointer, "a kernel spec has either a field or a rank");
    }
    if (!spec.field.empty() &&
        std::find(std::begin(kAttnFieldNames), std::end(kAttnFieldNames), spec.field) == std::end(kAttnFieldNames)) {
      return reader.Error(spec_pointer + "/field", "'" + spec.field + "' is not an AttnShardingRules field");
    }
    if (auto keep = spec_value.find("keep"); keep != spec_value.end()) {
      EP_ASSIGN_OR_RETURN(spec.keep, ParseDims(reader, *keep, spec_pointer + "/keep"));
    }
    if (auto pick = spec_value.find("pick"); pick != spec_value.end()) {
      EP_ASSIGN_OR_RETURN(spec.pick, ParseDims(reader, *pick, spec_pointer + "/pick"));
    }
    if (auto rank = spec_value.find("rank"); rank != spec_value.end()) {
      if (!rank->is_number_integer() || rank->get<int64_t>() < 1 || rank->get<int64_t>() > 8) {
        return reader.Error(spec_pointer + "/rank", "expected a rank from 1 to 8");
      }
      spec.rank = rank->get<int>();
    }
    EP_ASSIGN_OR_RETURN(spec.flatten, ParseBool(reader, spec_value, "flatten", false, spec_pointer));
    EP_ASSIGN_OR_RETURN(spec.tensor, reader.String(spec_value, spec_pointer, "tensor", false));
    static const char* const kTensors[] = {"", "query", "key", "value", "output", "query3d", "bias", "batch"};
    if (std::find(std::begin(kTensors), std::end(kTensors), spec.tensor) == std::end(kTensors)) {
      return reader.Error(spec_pointer + "/tensor", "'" + spec.tensor + "' is not a kernel tensor");
    }
    kernel.specs.push_back(std::move(spec));
  }
  return kernel;
}

}  // namespace

StatusOr<ActivationTable> ActivationTable::Parse(std::string_view text, const std::string& path) {
  EP_ASSIGN_OR_RETURN(Document doc, ParseYamlDocument(text, path));
  return Parse(doc);
}

StatusOr<ActivationTable> ActivationTable::Parse(const Document& doc) {
  schemas::SchemaReader reader(doc);
  const Json& root = doc.root();
  EP_RETURN_IF_ERROR(
      reader.CheckKeys(root, "", {"attention", "residual", "kv_cache", "experts", "kernels", "ragged_cache"}));
  ActivationTable table;

  const Json attention = root.value("attention", Json::object());
  EP_RETURN_IF_ERROR(reader.CheckKeys(
      attention, "/attention", std::vector<std::string>(std::begin(kAttnFieldNames), std::end(kAttnFieldNames))));
  for (const char* name : kAttnFieldNames) {
    const std::string pointer = std::string("/attention/") + name;
    auto it = attention.find(name);
    if (it == attention.end()) return reader.Error("/attention", std::string("missing the field '") + name + "'");
    EP_RETURN_IF_ERROR(
        reader.CheckKeys(*it, pointer, {"axes", "bthd", "bhtd", "bthd_mni", "bhtd_mni", "ndim2", "same_as"}));
    AttnField field;
    field.name = name;
    for (const auto& [key, value] : it->items()) {
      if (key == "same_as") {
        if (!value.is_string() || !attention.contains(value.get<std::string>())) {
          return reader.Error(pointer + "/same_as", "expected the name of another attention field");
        }
        field.same_as = value.get<std::string>();
        continue;
      }
      EP_ASSIGN_OR_RETURN(field.variants[key], rules::ParseAxesEntries(reader, value, PointerToMember(pointer, key)));
    }
    table.attention_.push_back(std::move(field));
  }

  const Json residual = root.value("residual", Json::object());
  if (!residual.is_object()) return reader.Error("/residual", "expected a mapping");
  for (const auto& [name, value] : residual.items()) {
    const std::string pointer = PointerToMember("/residual", name);
    EP_RETURN_IF_ERROR(reader.CheckKeys(value, pointer, {"axes", "dynamic", "train_only"}));
    ResidualEntry entry;
    entry.name = name;
    EP_ASSIGN_OR_RETURN(entry.axes, rules::ParseAxesEntries(reader, value.value("axes", Json()), pointer + "/axes"));
    if (auto dynamic = value.find("dynamic"); dynamic != value.end()) {
      if (!dynamic->is_number_integer()) return reader.Error(pointer + "/dynamic", "expected a dim index");
      entry.dynamic_dim = dynamic->get<int>();
    }
    EP_ASSIGN_OR_RETURN(entry.train_only, ParseBool(reader, value, "train_only", false, pointer));
    table.residual_.push_back(std::move(entry));
  }

  const Json cache = root.value("kv_cache", Json::object());
  EP_RETURN_IF_ERROR(reader.CheckKeys(cache, "/kv_cache", {"key", "value", "indexs", "starts"}));
  for (const char* name : {"key", "value", "indexs", "starts"}) {
    if (!cache.contains(name)) return reader.Error("/kv_cache", std::string("missing '") + name + "'");
    EP_ASSIGN_OR_RETURN(Axes axes, rules::ParseAxesEntries(reader, cache[name], std::string("/kv_cache/") + name));
    table.kv_cache_.emplace_back(name, std::move(axes));
  }

  const Json experts = root.value("experts", Json::object());
  EP_RETURN_IF_ERROR(reader.CheckKeys(experts, "/experts", {"fused", "model_output"}));
  const Json fused = experts.value("fused", Json::object());
  if (!fused.is_object()) return reader.Error("/experts/fused", "expected a mapping");
  for (const auto& [name, value] : fused.items()) {
    const std::string pointer = PointerToMember("/experts/fused", name);
    EP_RETURN_IF_ERROR(reader.CheckKeys(value, pointer, {"standard", "expert_tensor"}));
    FusedEntry entry;
    entry.name = name;
    EP_ASSIGN_OR_RETURN(entry.standard, ParseRoles(reader, value.value("standard", Json()), pointer + "/standard"));
    EP_ASSIGN_OR_RETURN(entry.expert_tensor,
                        ParseRoles(reader, value.value("expert_tensor", Json()), pointer + "/expert_tensor"));
    table.fused_.push_back(std::move(entry));
  }
  const Json model_output = experts.value("model_output", Json::object());
  EP_RETURN_IF_ERROR(reader.CheckKeys(model_output, "/experts/model_output", {"standard", "expert_tensor"}));
  EP_ASSIGN_OR_RETURN(
      table.model_output_,
      rules::ParseAxesEntries(reader, model_output.value("standard", Json::array()), "/experts/model_output/standard"));
  EP_ASSIGN_OR_RETURN(table.model_output_etm_,
                      rules::ParseAxesEntries(reader, model_output.value("expert_tensor", Json::array()),
                                              "/experts/model_output/expert_tensor"));

  const Json kernels = root.value("kernels", Json::object());
  if (!kernels.is_object()) return reader.Error("/kernels", "expected a mapping");
  for (const auto& [name, value] : kernels.items()) {
    EP_ASSIGN_OR_RETURN(Kernel kernel, ParseKernel(reader, name, value, PointerToMember("/kernels", name)));
    table.kernels_.push_back(std::move(kernel));
  }

  const Json ragged = root.value("ragged_cache", Json::object());
  EP_RETURN_IF_ERROR(
      reader.CheckKeys(ragged, "/ragged_cache", {"page", "head_group", "shard_count_from", "upcast", "kernel"}));
  for (const char* token : {"page", "head_group"}) {
    const Json entry = ragged.value(token, Json());
    if (!entry.is_string()) return reader.Error(std::string("/ragged_cache/") + token, "expected one token");
    (std::string(token) == "page" ? table.ragged_cache_.page : table.ragged_cache_.head_group) =
        Axes{std::vector<std::string>{entry.get<std::string>()}};
  }
  EP_ASSIGN_OR_RETURN(table.ragged_cache_.shard_count_from,
                      reader.String(ragged, "/ragged_cache", "shard_count_from", false));
  if (table.ragged_cache_.shard_count_from.empty()) table.ragged_cache_.shard_count_from = "kv_head_axis";
  const Json upcast = ragged.value("upcast", Json::array());
  if (!upcast.is_array()) return reader.Error("/ragged_cache/upcast", "expected a list of dtype names");
  for (const Json& dtype : upcast) {
    if (!dtype.is_string()) return reader.Error("/ragged_cache/upcast", "expected dtype names");
    table.ragged_cache_.upcast.push_back(dtype.get<std::string>());
  }
  const Json ragged_kernel = ragged.value("kernel", Json::object());
  EP_RETURN_IF_ERROR(reader.CheckKeys(ragged_kernel, "/ragged_cache/kernel", {"query", "kv", "sinks"}));
  EP_ASSIGN_OR_RETURN(
      table.ragged_cache_.query,
      rules::ParseAxesEntries(reader, ragged_kernel.value("query", Json::array()), "/ragged_cache/kernel/query"));
  EP_ASSIGN_OR_RETURN(table.ragged_cache_.kv, rules::ParseAxesEntries(reader, ragged_kernel.value("kv", Json::array()),
                                                                      "/ragged_cache/kernel/kv"));
  EP_ASSIGN_OR_RETURN(
      table.ragged_cache_.sinks,
      rules::ParseAxesEntries(reader, ragged_kernel.value("sinks", Json::array()), "/ragged_cache/kernel/sinks"));
  return table;
}

const ActivationTable::Kernel* ActivationTable::FindKernel(std::string_view name) const {
  for (const Kernel& kernel : kernels_) {
    if (kernel.name == name) return &kernel;
    for (const std::string& alias : kernel.easydel) {
      if (alias == name) return &kernel;
    }
  }
  return nullptr;
}

const ActivationTable::ResidualEntry* ActivationTable::FindResidual(std::string_view name) const {
  for (const ResidualEntry& entry : residual_) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

const ActivationTable::Axes* ActivationTable::FindCache(std::string_view name) const {
  for (const auto& [entry_name, axes] : kv_cache_) {
    if (entry_name == name) return &axes;
  }
  return nullptr;
}

}  // namespace easyplan::planner
