#ifndef EASYPLAN_SCHEMAS_SCHEMA_H_
#define EASYPLAN_SCHEMAS_SCHEMA_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/document.h"
#include "core/json.h"
#include "core/status.h"
#include "schemas/dim_keys.h"
#include "schemas/expression.h"
#include "schemas/type_spec.h"

namespace easyplan::schemas {

/// Which EasyDeL defaults fill missing attributes: `add_basic_configurations` (what a loaded config
/// gets, the default) or the `EasyDeLBaseConfig.__init__` signature (what a constructed config holds).
enum class DefaultsProfile { kAddBasic, kInit };

/// One declared key: its type, allowed values and default. Loaded from a schema YAML entry.
struct FieldSpec {
  std::string name;
  TypeSpec type;
  std::optional<Json> default_value;  // add_basic profile (families: the only profile)
  std::optional<Expression> default_expr;
  std::optional<Json> init_default_value;  // __init__ profile override
  std::optional<Expression> init_default_expr;
  std::vector<Json> allowed;        // enum; empty = unrestricted
  std::optional<Json> forced;       // EasyDeL always assigns this value
  bool copy_to_sub_configs = true;  // read_basics_from_config copies it
  SourceLoc loc;                    // schema file and line, for messages
};

/// A value computed after all overrides: `name = value` when `when` holds.
struct DerivedSpec {
  std::string name;
  Expression value;
  std::optional<Expression> when;
  SourceLoc loc;
};

/// A condition a resolved config must satisfy; `message` holds `{expr}` placeholders.
struct CheckSpec {
  enum class Phase { kInput, kResolved };
  std::string key;
  Expression require;
  std::optional<Expression> when;
  std::string message;
  Phase phase = Phase::kResolved;
  SourceLoc loc;
};

/// A model family (one HF model_type): schemas/families/<model_type>.yaml.
struct FamilySchema {
  std::string model_type;
  std::string config_class;
  std::string inherits;                                            // "" = none
  std::vector<std::pair<std::string, std::string>> attribute_map;  // alias -> stored name
  std::vector<FieldSpec> fields;
  /// Keys inside an object field ("rope_scaling.factor"): type-checked when present, never defaulted.
  std::vector<FieldSpec> subfields;
  std::vector<DerivedSpec> derived;
  std::vector<CheckSpec> checks;
  std::vector<std::pair<std::string, std::string>> sub_configs;  // key -> family
  /// What the model's geometry (schemas/model_dims.h) reads where the config does not say it under the
  /// canonical name: `name: expression`, evaluated over the resolved config, never part of the config.
  std::vector<DerivedSpec> geometry;
  /// `dims:`: the config keys this family reads a canonical dim from (schemas/dim_keys.h), where they are
  /// not schemas/dims.yaml's shared ones.
  DimKeyOverrides dim_keys;
  /// Another family whose schema, tree and rules this model_type uses (kimi_k2 -> deepseek_v3); ""
  /// for a family of its own. An alias file holds nothing else.
  std::string alias_of;
  std::string source;  // schema path for messages
};

/// EasyDeL's base attributes and PartitionAxis fields: schemas/easydel.yaml.
struct EasyDelSchema {
  std::string version;  ///< the EasyDeL version these attributes are (schemas/easydel_versions.yaml)
  std::vector<FieldSpec> attributes;
  std::vector<FieldSpec> partition_axis;
  std::string source;
};

/// Parse a family file. `text` is YAML; `path` names it in messages.
StatusOr<FamilySchema> ParseFamilySchema(std::string_view text, const std::string& path);
/// The same from the parsed file (DataSource::ReadDocument), named by doc.file().
StatusOr<FamilySchema> ParseFamilySchema(const Document& doc);

/// Parse the EasyDeL attribute file as EasyDeL `version` has it: an attribute with `versions: [...]`
/// exists only at those versions, and `at: {VERSION: {default: ..., init_default: ..., enum: ...}}`
/// replaces its keys at one version (docs/SCHEMAS.md, "EasyDeL versions"). `known` lists every version
/// name, to refuse a misspelt one in the file.
StatusOr<EasyDelSchema> ParseEasyDelSchema(std::string_view text, const std::string& path, const std::string& version,
                                           const std::vector<std::string>& known);
StatusOr<EasyDelSchema> ParseEasyDelSchema(const Document& doc, const std::string& version,
                                           const std::vector<std::string>& known);

}  // namespace easyplan::schemas

#endif  // EASYPLAN_SCHEMAS_SCHEMA_H_
