#include "planner/activation_table.h"

#include "core/document.h"
#include "schemas/schema_reader.h"

namespace easyplan::planner {
namespace {

using Axes = ActivationTable::Axes;

const char* const kAttnFieldNames[] = {"query3d", "query",  "key",           "value",          "bias",
                                       "mask",    "output", "q_segment_ids", "kv_segment_ids", "softmax_aux"};

StatusOr<Axes> ParseAxes(const schemas::SchemaReader& reader, const Json& value, const std::string& pointer) {
  if (!value.is_array()) return reader.Error(pointer, "expected a list of axes entries");
  Axes axes;
  for (const Json& entry : value) {
    if (entry.is_null()) {
      axes.emplace_back(std::nullopt);
    } else if (entry.is_string()) {
      axes.emplace_back(std::vector<std::string>{entry.get<std::string>()});
    } else if (entry.is_array()) {
      std::vector<std::string> names;
      for (const Json& name : entry) {
        if (!name.is_string()) return reader.Error(pointer, "composite entries hold token names");
        names.push_back(name.get<std::string>());
      }
      axes.emplace_back(std::move(names));
    } else {
      return reader.Error(pointer, "an entry is null, a token or a list of tokens");
    }
  }
  return axes;
}

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

}  // namespace

StatusOr<ActivationTable> ActivationTable::Parse(std::string_view text, const std::string& path) {
  EP_ASSIGN_OR_RETURN(Document doc, ParseYamlDocument(text, path));
  schemas::SchemaReader reader(doc);
  const Json& root = doc.root();
  EP_RETURN_IF_ERROR(reader.CheckKeys(root, "", {"attention", "residual", "kv_cache", "experts"}));
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
      EP_ASSIGN_OR_RETURN(field.variants[key], ParseAxes(reader, value, pointer + "/" + key));
    }
    table.attention_.push_back(std::move(field));
  }

  const Json residual = root.value("residual", Json::object());
  if (!residual.is_object()) return reader.Error("/residual", "expected a mapping");
  for (const auto& [name, value] : residual.items()) {
    const std::string pointer = "/residual/" + PointerToken(name);
    EP_RETURN_IF_ERROR(reader.CheckKeys(value, pointer, {"axes", "dynamic", "train_only"}));
    ResidualEntry entry;
    entry.name = name;
    EP_ASSIGN_OR_RETURN(entry.axes, ParseAxes(reader, value.value("axes", Json()), pointer + "/axes"));
    if (auto dynamic = value.find("dynamic"); dynamic != value.end()) {
      if (!dynamic->is_number_integer()) return reader.Error(pointer + "/dynamic", "expected a dim index");
      entry.dynamic_dim = dynamic->get<int>();
    }
    entry.train_only = value.value("train_only", false);
    table.residual_.push_back(std::move(entry));
  }

  const Json cache = root.value("kv_cache", Json::object());
  EP_RETURN_IF_ERROR(reader.CheckKeys(cache, "/kv_cache", {"key", "value", "indexs", "starts"}));
  for (const char* name : {"key", "value", "indexs", "starts"}) {
    if (!cache.contains(name)) return reader.Error("/kv_cache", std::string("missing '") + name + "'");
    EP_ASSIGN_OR_RETURN(Axes axes, ParseAxes(reader, cache[name], std::string("/kv_cache/") + name));
    table.kv_cache_.emplace_back(name, std::move(axes));
  }

  const Json experts = root.value("experts", Json::object());
  EP_RETURN_IF_ERROR(reader.CheckKeys(experts, "/experts", {"count", "fused", "model_output"}));
  for (const Json& key : experts.value("count", Json::array())) {
    if (!key.is_string()) return reader.Error("/experts/count", "expected config key names");
    table.expert_count_keys_.push_back(key.get<std::string>());
  }
  const Json fused = experts.value("fused", Json::object());
  if (!fused.is_object()) return reader.Error("/experts/fused", "expected a mapping");
  for (const auto& [name, value] : fused.items()) {
    const std::string pointer = "/experts/fused/" + PointerToken(name);
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
  EP_ASSIGN_OR_RETURN(table.model_output_, ParseAxes(reader, model_output.value("standard", Json::array()),
                                                     "/experts/model_output/standard"));
  EP_ASSIGN_OR_RETURN(table.model_output_etm_, ParseAxes(reader, model_output.value("expert_tensor", Json::array()),
                                                         "/experts/model_output/expert_tensor"));
  return table;
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
