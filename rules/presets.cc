#include "rules/presets.h"

#include <fmt/format.h>

#include <cctype>

#include "core/document.h"
#include "core/json_pointer.h"
#include "core/yaml_parse.h"
#include "rules/rule_set.h"
#include "schemas/schema_reader.h"

namespace easyplan::rules {
namespace {

std::string Upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

std::string EntryText(const AxesEntry& entry) {
  if (!entry) return "None";
  if (entry->size() == 1) return (*entry)[0];
  return "[" + fmt::format("{}", fmt::join(*entry, ", ")) + "]";
}

}  // namespace

StatusOr<std::vector<AxesEntry>> ParseAxesEntries(const schemas::SchemaReader& reader, const Json& value,
                                                  const std::string& pointer) {
  if (!value.is_array()) return reader.Error(pointer, "expected a list of axes entries");
  std::vector<AxesEntry> axes;
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

StatusOr<Presets> Presets::Parse(std::string_view text, const std::string& path) {
  EP_ASSIGN_OR_RETURN(Document doc, ParseYamlDocument(text, path));
  return Parse(doc);
}

StatusOr<Presets> Presets::Parse(const Document& doc) {
  schemas::SchemaReader reader(doc);
  const Json& root = doc.root();
  EP_RETURN_IF_ERROR(reader.CheckKeys(root, "", {"tokens", "generation_attributes", "presets"}));
  Presets presets;
  if (auto it = root.find("tokens"); it != root.end() && it->is_object()) {
    for (const auto& [name, attribute] : it->items()) presets.tokens_[name] = attribute;
  }
  if (auto it = root.find("generation_attributes"); it != root.end() && it->is_object()) {
    for (const auto& [name, attribute] : it->items()) {
      if (attribute.is_string()) presets.generation_[name] = attribute.get<std::string>();
    }
  }
  auto list = root.find("presets");
  if (list == root.end() || !list->is_object()) return reader.Error("/presets", "expected a mapping of presets");
  for (const auto& [name, value] : list->items()) {
    std::string pointer = PointerToMember("/presets", name);
    EP_RETURN_IF_ERROR(reader.CheckKeys(value, pointer, {"axes", "cases"}));
    Preset preset;
    EP_ASSIGN_OR_RETURN(preset.axes, ParseAxesEntries(reader, value.value("axes", Json()), pointer + "/axes"));
    if (auto cases = value.find("cases"); cases != value.end()) {
      for (size_t i = 0; i < cases->size(); ++i) {
        std::string case_pointer = PointerToElement(pointer + "/cases", i);
        EP_ASSIGN_OR_RETURN(schemas::Expression when, reader.RequiredExpr((*cases)[i], case_pointer, "when"));
        EP_ASSIGN_OR_RETURN(auto axes,
                            ParseAxesEntries(reader, (*cases)[i].value("axes", Json()), case_pointer + "/axes"));
        preset.cases.emplace_back(std::move(when), std::move(axes));
      }
    }
    presets.presets_[name] = std::move(preset);
    presets.preset_order_.push_back(name);
  }
  return presets;
}

std::vector<std::string> Presets::PresetNames() const { return preset_order_; }

std::optional<std::string> Presets::CanonicalToken(const std::string& name) const {
  std::string bare = name;
  if (bare.size() > 4 && bare.starts_with("__") && bare.ends_with("__")) bare = bare.substr(2, bare.size() - 4);
  if (name == "_") return std::string("EMPTY");
  std::string upper = Upper(bare);
  // Lower-case dp/fsdp/tp/ep/sp are the mesh axes themselves; only their __X__ / upper-case spelling
  // is the token (which follows a renamed partition_axis).
  if (bare == name && upper != name &&
      (name == "dp" || name == "fsdp" || name == "tp" || name == "ep" || name == "sp")) {
    return std::nullopt;
  }
  if (tokens_.count(upper) > 0) return upper;
  return std::nullopt;
}

StatusOr<PartitionSpec> Presets::Resolve(const SpecSource& spec, const Json& config, Mode mode,
                                         std::vector<std::string>* trace) const {
  std::vector<AxesEntry> axes;
  if (spec.preset) {
    auto it = presets_.find(*spec.preset);
    if (it == presets_.end()) return Status::BadInput({}, "unknown preset '" + *spec.preset + "'");
    axes = it->second.axes;
    std::string chosen = "default";
    for (const auto& [when, case_axes] : it->second.cases) {
      auto holds = when.Evaluate(config);
      if (!holds.ok()) {
        return Status::BadInput(
            {}, "preset " + *spec.preset + ": condition '" + when.text() + "': " + holds.status().diag().message);
      }
      if (schemas::IsTruthy(*holds)) {
        axes = case_axes;
        chosen = when.text();
        break;
      }
    }
    if (trace) {
      std::vector<std::string> parts;
      for (const AxesEntry& entry : axes) parts.push_back(EntryText(entry));
      trace->push_back(fmt::format("{} = [{}]{}", *spec.preset, fmt::join(parts, ", "),
                                   it->second.cases.empty() ? "" : " (case: " + chosen + ")"));
    }
  } else {
    axes = spec.dims;
  }
  const Json empty = Json::object();
  const Json& paxis =
      config.contains("partition_axis") && config["partition_axis"].is_object() ? config["partition_axis"] : empty;
  // One name -> the mesh axes it stands for (a list when the attribute holds a tuple).
  auto resolve_name = [&](const std::string& name) -> StatusOr<Json> {
    std::optional<std::string> token = CanonicalToken(name);
    if (!token) return Json(name);  // a literal mesh axis
    const Json& attribute = tokens_.at(*token);
    if (attribute.is_null()) return Json();
    std::string attr = attribute.get<std::string>();
    if (IsGenerationMode(mode)) {
      if (auto gen = generation_.find(attr); gen != generation_.end()) {
        auto value = paxis.find(gen->second);
        if (value != paxis.end() && !value->is_null()) attr = gen->second;
      }
    }
    auto value = paxis.find(attr);
    if (value == paxis.end()) {
      return Status::BadInput({"", PointerToMember("/partition_axis", attr)},
                              "token " + *token + " needs partition_axis." + attr + ", which the config does not have");
    }
    if (trace) trace->push_back(fmt::format("{} -> partition_axis.{} = {}", name, attr, value->dump()));
    return *value;
  };
  std::vector<PartitionSpec::Entry> entries;
  for (const AxesEntry& entry : axes) {
    if (!entry) {
      entries.emplace_back();
      continue;
    }
    if (entry->size() == 1) {
      EP_ASSIGN_OR_RETURN(Json value, resolve_name((*entry)[0]));
      PartitionSpec::Entry resolved;
      if (value.is_string()) {
        resolved.push_back(value.get<std::string>());
      } else if (value.is_array()) {
        for (const Json& axis : value) {
          if (axis.is_string()) resolved.push_back(axis.get<std::string>());
        }
      }
      entries.push_back(std::move(resolved));
      continue;
    }
    // A composite: every member must resolve to a single mesh axis (JAX rejects nested tuples).
    PartitionSpec::Entry resolved;
    for (const std::string& name : *entry) {
      EP_ASSIGN_OR_RETURN(Json value, resolve_name(name));
      if (value.is_null()) continue;
      if (value.is_array()) {
        if (value.size() == 1 && value[0].is_string()) {
          resolved.push_back(value[0].get<std::string>());
          continue;
        }
        return Status::BadInput({}, "A tuple inside PartitionSpec cannot contain a nested tuple: '" + name + "' in " +
                                        spec.text + " resolves to " + value.dump());
      }
      resolved.push_back(value.get<std::string>());
    }
    entries.push_back(std::move(resolved));
  }
  PartitionSpec result(std::move(entries));
  if (trace) trace->push_back("-> " + result.ToString());
  return result;
}

}  // namespace easyplan::rules
