// Loading of schema YAML files into FamilySchema / EasyDelSchema, with file:line on every error.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "core/did_you_mean.h"
#include "core/document.h"
#include "core/json_pointer.h"
#include "core/number_literal.h"
#include "core/yaml_parse.h"
#include "schemas/schema.h"
#include "schemas/schema_reader.h"

namespace easyplan::schemas {

StatusOr<FamilySchema> ParseFamilySchema(std::string_view text, const std::string& path) {
  EP_ASSIGN_OR_RETURN(Document doc, ParseYamlDocument(text, path));
  return ParseFamilySchema(doc);
}

StatusOr<FamilySchema> ParseFamilySchema(const Document& doc) {
  SchemaReader reader(doc);
  const Json& root = doc.root();
  EP_RETURN_IF_ERROR(
      reader.CheckKeys(root, "",
                       {"model_type", "config_class", "inherits", "attribute_map", "fields", "subfields", "derived",
                        "checks", "sub_configs", "numeric_check", "geometry", "dims", "context", "alias_of", "doc"}));
  FamilySchema family;
  family.source = doc.file();
  EP_ASSIGN_OR_RETURN(family.model_type, reader.String(root, "", "model_type", true));
  EP_ASSIGN_OR_RETURN(family.alias_of, reader.String(root, "", "alias_of", false));
  if (!family.alias_of.empty()) {
    // An alias is the other family, whole: a field of its own would make it a copy that drifts.
    EP_RETURN_IF_ERROR(reader.CheckKeys(root, "", {"model_type", "alias_of", "config_class", "doc"}));
    return family;
  }
  EP_ASSIGN_OR_RETURN(family.config_class, reader.String(root, "", "config_class", false));
  EP_ASSIGN_OR_RETURN(family.inherits, reader.String(root, "", "inherits", false));
  EP_ASSIGN_OR_RETURN(family.attribute_map, reader.StringMap(root, "attribute_map"));
  EP_ASSIGN_OR_RETURN(family.sub_configs, reader.StringMap(root, "sub_configs"));
  EP_ASSIGN_OR_RETURN(family.fields, reader.Fields(root, "fields", false));
  EP_ASSIGN_OR_RETURN(family.subfields, reader.Fields(root, "subfields", false));
  for (const FieldSpec& field : family.subfields) {
    const size_t dot = field.name.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == field.name.size()) {
      return Status::BadInput(field.loc,
                              "a subfield is named OBJECT.KEY (rope_scaling.factor), found '" + field.name + "'");
    }
  }
  if (auto it = root.find("derived"); it != root.end() && !it->is_null()) {
    if (!it->is_array()) return reader.Error("/derived", "expected a list");
    for (size_t i = 0; i < it->size(); ++i) {
      std::string pointer = PointerToElement("/derived", i);
      const Json& entry = (*it)[i];
      EP_RETURN_IF_ERROR(reader.CheckKeys(entry, pointer, {"name", "value", "when", "doc"}));
      EP_ASSIGN_OR_RETURN(std::string name, reader.String(entry, pointer, "name", true));
      EP_ASSIGN_OR_RETURN(Expression value, reader.RequiredExpr(entry, pointer, "value"));
      EP_ASSIGN_OR_RETURN(auto when, reader.OptionalExpr(entry, pointer, "when"));
      SourceLoc loc = doc.Locate(pointer);
      loc.pointer.clear();
      family.derived.push_back(DerivedSpec{std::move(name), std::move(value), std::move(when), loc});
    }
  }
  if (auto it = root.find("checks"); it != root.end() && !it->is_null()) {
    if (!it->is_array()) return reader.Error("/checks", "expected a list");
    for (size_t i = 0; i < it->size(); ++i) {
      std::string pointer = PointerToElement("/checks", i);
      const Json& entry = (*it)[i];
      EP_RETURN_IF_ERROR(reader.CheckKeys(entry, pointer, {"key", "require", "when", "message", "phase"}));
      CheckSpec check{"", Expression(*Expression::Parse("true")), std::nullopt, "", CheckSpec::Phase::kResolved, {}};
      EP_ASSIGN_OR_RETURN(check.key, reader.String(entry, pointer, "key", true));
      EP_ASSIGN_OR_RETURN(check.require, reader.RequiredExpr(entry, pointer, "require"));
      EP_ASSIGN_OR_RETURN(check.when, reader.OptionalExpr(entry, pointer, "when"));
      EP_ASSIGN_OR_RETURN(check.message, reader.String(entry, pointer, "message", true));
      EP_ASSIGN_OR_RETURN(std::string phase, reader.String(entry, pointer, "phase", false));
      if (phase == "input") {
        check.phase = CheckSpec::Phase::kInput;
      } else if (!phase.empty() && phase != "resolved") {
        return reader.Error(pointer + "/phase", "expected 'input' or 'resolved', found '" + phase + "'");
      }
      check.loc = doc.Locate(pointer);
      check.loc.pointer.clear();
      family.checks.push_back(std::move(check));
    }
  }
  if (auto it = root.find("geometry"); it != root.end() && !it->is_null()) {
    if (!it->is_object()) return reader.Error("/geometry", "expected a mapping of dim name to expression");
    for (const auto& item : it->items()) {
      const std::string pointer = PointerToMember("/geometry", item.key());
      const Json& given = item.value();
      if (!given.is_string() && !given.is_boolean() && !given.is_number()) {
        return reader.Error(pointer, std::string("expected an expression, found ") + JsonTypeName(given));
      }
      auto value = Expression::Parse(given.is_string() ? given.get<std::string>() : given.dump());
      if (!value.ok()) return reader.Error(pointer, value.status().diag().message);
      SourceLoc loc = doc.Locate(pointer);
      loc.pointer.clear();
      family.geometry.push_back(DerivedSpec{item.key(), std::move(*value), std::nullopt, loc});
    }
  }
  if (auto it = root.find("dims"); it != root.end()) {
    EP_ASSIGN_OR_RETURN(family.dim_keys, ParseDimKeyOverrides(doc, *it, "/dims"));
  }
  // context: {key, positions}: the config key that bounds a sequence and how positions are encoded
  // (docs/SCHEMAS.md, "context"). Read as two geometry entries, context_key and context_positions (string
  // literals), so that it reaches schemas/model_dims.h as the rest of the geometry does, inherited and per
  // sub-config.
  if (auto it = root.find("context"); it != root.end() && !it->is_null()) {
    EP_RETURN_IF_ERROR(reader.CheckKeys(*it, "/context", {"key", "positions", "doc"}));
    EP_ASSIGN_OR_RETURN(std::string key, reader.String(*it, "/context", "key", true));
    EP_ASSIGN_OR_RETURN(std::string positions, reader.String(*it, "/context", "positions", true));
    bool identifier = !key.empty();
    for (char c : key) identifier = identifier && (IsAsciiAlpha(c) || IsAsciiDigit(c) || c == '_');
    if (!identifier)
      return reader.Error("/context/key", "expected a config key such as 'n_positions', found '" + key + "'");
    if (positions != "learned" && positions != "rotary") {
      return reader.Error("/context/positions",
                          "expected 'learned' (an embedding table: no row past the key) or 'rotary' (runs past it, "
                          "degraded), found '" +
                              positions + "'");
    }
    SourceLoc loc = doc.Locate("/context");
    loc.pointer.clear();
    for (const auto& [name, value] : {std::pair<std::string, std::string>{"context_key", key},
                                      std::pair<std::string, std::string>{"context_positions", positions}}) {
      EP_ASSIGN_OR_RETURN(Expression literal, Expression::Parse("'" + value + "'"));
      family.geometry.push_back(DerivedSpec{name, std::move(literal), std::nullopt, loc});
    }
  }
  // numeric_check is `check`'s alone: SchemaSet::NumericCheck parses it when asked, not every resolve.
  return family;
}

StatusOr<EasyDelSchema> ParseEasyDelSchema(std::string_view text, const std::string& path, const std::string& version,
                                           const std::vector<std::string>& known) {
  EP_ASSIGN_OR_RETURN(Document doc, ParseYamlDocument(text, path));
  return ParseEasyDelSchema(doc, version, known);
}

namespace {

Status CheckVersionName(const SchemaReader& reader, const std::string& pointer, const Json& name,
                        const std::vector<std::string>& known) {
  if (name.is_string() && std::find(known.begin(), known.end(), name.get<std::string>()) != known.end()) {
    return Status();
  }
  std::string message = "expected an EasyDeL version of schemas/easydel_versions.yaml (" +
                        fmt::format("{}", fmt::join(known, ", ")) + "), found " + JsonForMessage(name);
  if (name.is_string()) {
    if (auto suggestion = SuggestClosest(name.get<std::string>(), known)) {
      message += " (did you mean '" + *suggestion + "'?)";
    }
  }
  return reader.Error(pointer, message);
}

// The entry as `version` has it (`at:` applied, `versions:` and `at:` removed); nullopt when the
// attribute does not exist at that version.
StatusOr<std::optional<Json>> EntryAtVersion(const SchemaReader& reader, const Json& entry, const std::string& pointer,
                                             const std::string& version, const std::vector<std::string>& known) {
  if (!entry.is_object()) return std::optional<Json>(entry);  // Field() reports the shape
  Json out = entry;
  bool exists = true;
  if (auto it = entry.find("versions"); it != entry.end()) {
    const std::string at = PointerToMember(pointer, "versions");
    if (!it->is_array() || it->empty()) return reader.Error(at, "expected a non-empty list of EasyDeL versions");
    exists = false;
    for (size_t i = 0; i < it->size(); ++i) {
      EP_RETURN_IF_ERROR(CheckVersionName(reader, PointerToElement(at, i), (*it)[i], known));
      exists = exists || (*it)[i] == version;
    }
    out.erase("versions");
  }
  if (auto it = entry.find("at"); it != entry.end()) {
    const std::string at = PointerToMember(pointer, "at");
    if (!it->is_object()) return reader.Error(at, "expected a mapping of EasyDeL version to keys");
    for (const auto& [name, keys] : it->items()) {
      const std::string here = PointerToMember(at, name);
      EP_RETURN_IF_ERROR(CheckVersionName(reader, here, Json(name), known));
      EP_RETURN_IF_ERROR(reader.CheckKeys(
          keys, here, {"default", "default_expr", "init_default", "init_default_expr", "enum", "doc"}));
      if (name != version) continue;
      for (const auto& [key, value] : keys.items()) {
        // A version's default replaces the base one, whichever form either has.
        if (key == "default") out.erase("default_expr");
        if (key == "default_expr") out.erase("default");
        if (key == "init_default") out.erase("init_default_expr");
        if (key == "init_default_expr") out.erase("init_default");
        out[key] = value;
      }
    }
    out.erase("at");
  }
  if (!exists) return std::optional<Json>();
  return std::optional<Json>(std::move(out));
}

}  // namespace

StatusOr<EasyDelSchema> ParseEasyDelSchema(const Document& doc, const std::string& version,
                                           const std::vector<std::string>& known) {
  SchemaReader reader(doc);
  EP_RETURN_IF_ERROR(reader.CheckKeys(doc.root(), "", {"attributes", "partition_axis"}));
  EasyDelSchema schema;
  schema.source = doc.file();
  schema.version = version;
  if (auto it = doc.root().find("attributes"); it != doc.root().end()) {
    if (!it->is_array()) return reader.Error("/attributes", "expected a list of fields");
    std::set<std::string> seen;
    for (size_t i = 0; i < it->size(); ++i) {
      const std::string pointer = PointerToElement("/attributes", i);
      EP_ASSIGN_OR_RETURN(std::optional<Json> entry, EntryAtVersion(reader, (*it)[i], pointer, version, known));
      if (!entry) continue;
      EP_ASSIGN_OR_RETURN(FieldSpec field, reader.Field(*entry, pointer, true));
      if (!seen.insert(field.name).second) return reader.Error(pointer, "field '" + field.name + "' is declared twice");
      schema.attributes.push_back(std::move(field));
    }
  }
  EP_ASSIGN_OR_RETURN(schema.partition_axis, reader.Fields(doc.root(), "partition_axis", false));
  return schema;
}

}  // namespace easyplan::schemas
