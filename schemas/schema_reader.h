#ifndef EASYPLAN_SCHEMAS_SCHEMA_READER_H_
#define EASYPLAN_SCHEMAS_SCHEMA_READER_H_

// Typed access to a parsed schema/template YAML document: every accessor reports errors at the
// file:line of the offending key, with a did-you-mean for unknown keys. Shared by the family,
// EasyDeL and tree-template parsers.

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/did_you_mean.h"
#include "core/document.h"
#include "core/json_pointer.h"
#include "schemas/expression.h"
#include "schemas/schema.h"

namespace easyplan::schemas {

class SchemaReader {
 public:
  explicit SchemaReader(const Document& doc) : doc_(doc) {}

  Status Error(const std::string& pointer, const std::string& message) const {
    SourceLoc loc = doc_.Locate(pointer);
    return Status::BadInput(loc, message);
  }

  // Checks that `object` only has `allowed` keys.
  Status CheckKeys(const Json& object, const std::string& pointer, const std::vector<std::string>& allowed) const {
    if (!object.is_object()) return Error(pointer, "expected a mapping, found " + std::string(JsonTypeName(object)));
    for (const auto& [key, value] : object.items()) {
      bool known = false;
      for (const std::string& name : allowed) known = known || name == key;
      if (!known) {
        std::string message = "unknown schema key '" + key + "'";
        if (auto suggestion = SuggestClosest(key, allowed)) message += " (did you mean '" + *suggestion + "'?)";
        return Error(PointerToMember(pointer, key), message);
      }
    }
    return Status();
  }

  StatusOr<std::string> String(const Json& object, const std::string& pointer, const std::string& key,
                               bool required) const {
    auto it = object.find(key);
    if (it == object.end()) {
      if (required) return Error(pointer, "missing required key '" + key + "'");
      return std::string();
    }
    if (!it->is_string()) {
      return Error(PointerToMember(pointer, key), "expected a string, found " + std::string(JsonTypeName(*it)));
    }
    return it->get<std::string>();
  }

  StatusOr<std::optional<Expression>> OptionalExpr(const Json& object, const std::string& pointer,
                                                   const std::string& key) const {
    EP_ASSIGN_OR_RETURN(std::string text, String(object, pointer, key, false));
    if (!object.contains(key)) return std::optional<Expression>();
    auto expr = Expression::Parse(text);
    if (!expr.ok()) return Error(PointerToMember(pointer, key), expr.status().diag().message);
    return std::optional<Expression>(*expr);
  }

  StatusOr<Expression> RequiredExpr(const Json& object, const std::string& pointer, const std::string& key) const {
    EP_ASSIGN_OR_RETURN(auto expr, OptionalExpr(object, pointer, key));
    if (!expr) return Error(pointer, "missing required key '" + key + "'");
    return *expr;
  }

  StatusOr<FieldSpec> Field(const Json& entry, const std::string& pointer, bool easydel) const {
    std::vector<std::string> allowed = {"name", "type", "default", "default_expr", "enum", "doc"};
    if (easydel) {
      for (const char* key : {"init_default", "init_default_expr", "forced", "copy_to_sub_configs", "versions", "at"}) {
        allowed.push_back(key);
      }
    }
    EP_RETURN_IF_ERROR(CheckKeys(entry, pointer, allowed));
    FieldSpec field;
    field.loc = doc_.Locate(pointer);
    field.loc.pointer.clear();
    EP_ASSIGN_OR_RETURN(field.name, String(entry, pointer, "name", true));
    EP_ASSIGN_OR_RETURN(std::string type_text, String(entry, pointer, "type", false));
    if (!type_text.empty()) {
      auto type = TypeSpec::Parse(type_text);
      if (!type.ok()) return Error(pointer + "/type", type.status().diag().message);
      field.type = *type;
    }
    if (entry.contains("default")) field.default_value = entry["default"];
    if (entry.contains("init_default")) field.init_default_value = entry["init_default"];
    if (entry.contains("forced")) field.forced = entry["forced"];
    EP_ASSIGN_OR_RETURN(field.default_expr, OptionalExpr(entry, pointer, "default_expr"));
    EP_ASSIGN_OR_RETURN(field.init_default_expr, OptionalExpr(entry, pointer, "init_default_expr"));
    if (field.default_value && field.default_expr) {
      return Error(pointer, "field '" + field.name + "' has both 'default' and 'default_expr'");
    }
    if (auto it = entry.find("enum"); it != entry.end()) {
      if (!it->is_array()) return Error(pointer + "/enum", "expected a list");
      field.allowed.assign(it->begin(), it->end());
    }
    if (auto it = entry.find("copy_to_sub_configs"); it != entry.end()) {
      if (!it->is_boolean()) return Error(pointer + "/copy_to_sub_configs", "expected true or false");
      field.copy_to_sub_configs = it->get<bool>();
    }
    // A literal default must satisfy the declared type (catches schema typos at load time).
    for (const std::optional<Json>* literal : {&field.default_value, &field.init_default_value, &field.forced}) {
      if (!literal->has_value()) continue;
      Json copy = **literal;
      if (auto expected = field.type.Check(copy)) {
        return Error(pointer, "default of '" + field.name + "' is " + JsonForMessage(**literal) + ", but its type '" +
                                  field.type.text() + "' expects " + *expected);
      }
    }
    return field;
  }

  StatusOr<std::vector<FieldSpec>> Fields(const Json& root, const std::string& key, bool easydel) const {
    std::vector<FieldSpec> fields;
    auto it = root.find(key);
    if (it == root.end()) return fields;
    if (!it->is_array()) return Error(PointerToMember("", key), "expected a list of fields");
    std::set<std::string> seen;
    for (size_t i = 0; i < it->size(); ++i) {
      std::string pointer = PointerToElement(PointerToMember("", key), i);
      EP_ASSIGN_OR_RETURN(FieldSpec field, Field((*it)[i], pointer, easydel));
      if (!seen.insert(field.name).second) return Error(pointer, "field '" + field.name + "' is declared twice");
      fields.push_back(std::move(field));
    }
    return fields;
  }

  StatusOr<std::vector<std::pair<std::string, std::string>>> StringMap(const Json& root, const std::string& key) const {
    std::vector<std::pair<std::string, std::string>> map;
    auto it = root.find(key);
    if (it == root.end() || it->is_null()) return map;
    if (!it->is_object()) return Error(PointerToMember("", key), "expected a mapping of names");
    for (const auto& [name, value] : it->items()) {
      if (!value.is_string()) return Error(JoinPointer({key, name}), "expected a name");
      map.emplace_back(name, value.get<std::string>());
    }
    return map;
  }

  const Document& doc_;
};

}  // namespace easyplan::schemas

#endif  // EASYPLAN_SCHEMAS_SCHEMA_READER_H_
