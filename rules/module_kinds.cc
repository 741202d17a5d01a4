#include "rules/module_kinds.h"

#include "core/json_pointer.h"
#include "schemas/schema_reader.h"

namespace easyplan::rules {

const ModuleKind* ModuleKinds::Find(const std::string& name) const {
  auto it = kinds.find(name);
  return it == kinds.end() ? nullptr : &it->second;
}

std::vector<std::string> ModuleKinds::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, kind] : kinds) names.push_back(name);
  return names;
}

StatusOr<ModuleKinds> ModuleKinds::Parse(const Document& doc, const Presets& presets) {
  schemas::SchemaReader reader(doc);
  const Json& root = doc.root();
  EP_RETURN_IF_ERROR(reader.CheckKeys(root, "", {"kinds"}));
  auto kinds = root.find("kinds");
  if (kinds == root.end() || !kinds->is_object()) return reader.Error("", "expected 'kinds': a map of module kinds");
  ModuleKinds result;
  for (const auto& [name, entry] : kinds->items()) {
    const std::string pointer = PointerToMember("/kinds", name);
    EP_RETURN_IF_ERROR(reader.CheckKeys(entry, pointer, {"doc", "params"}));
    ModuleKind kind;
    kind.name = name;
    EP_ASSIGN_OR_RETURN(kind.doc, reader.String(entry, pointer, "doc", true));
    auto params = entry.find("params");
    if (params == entry.end() || !params->is_array()) {
      return reader.Error(pointer, "expected 'params': a list of {param, spec}");
    }
    for (size_t i = 0; i < params->size(); ++i) {
      const std::string param_pointer = PointerToElement(pointer + "/params", i);
      const Json& param = (*params)[i];
      EP_RETURN_IF_ERROR(reader.CheckKeys(param, param_pointer, {"param", "spec", "cases"}));
      EP_ASSIGN_OR_RETURN(std::string param_name, reader.String(param, param_pointer, "param", true));
      Rule rule;
      rule.loc = doc.Locate(param_pointer);
      rule.loc.pointer.clear();
      EP_RETURN_IF_ERROR(ParseRuleSpec(reader, presets, param, param_pointer, rule));
      if (!kind.params.emplace(param_name, std::move(rule)).second) {
        return reader.Error(param_pointer + "/param", "parameter '" + param_name + "' is listed twice");
      }
    }
    result.kinds.emplace(name, std::move(kind));
  }
  return result;
}

}  // namespace easyplan::rules
