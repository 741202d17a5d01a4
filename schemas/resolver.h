#ifndef EASYPLAN_SCHEMAS_RESOLVER_H_
#define EASYPLAN_SCHEMAS_RESOLVER_H_

#include <optional>
#include <string>
#include <vector>

#include "core/document.h"
#include "core/json.h"
#include "core/limits.h"
#include "core/status.h"
#include "schemas/dim_keys.h"
#include "schemas/schema.h"
#include "schemas/schema_set.h"

namespace easyplan::schemas {

/// What the user gave: the config file, an optional overrides file and `--set KEY=VALUE` strings.
struct ConfigInput {
  Document config;
  std::optional<Document> overrides;
  std::vector<std::string> sets;  // as typed: "rope_scaling.factor=8"
};

struct ResolveOptions {
  DefaultsProfile profile = DefaultsProfile::kAddBasic;
  std::optional<int64_t> devices;  // fills the -1 in sharding_axis_dims when set
  Limits limits;                   // applied to --set values (the documents were parsed under them)
  std::string easydel_version;     // whose attribute set and defaults (schemas/easydel.yaml); "" = default
};

/// The complete config a framework would hold, and where each top-level value came from.
struct ResolvedConfig {
  Json config;         ///< file keys in file order, then added keys in schema order
  Json provenance;     ///< same keys: "file", "overrides", "set", "default:<family>", "default:easydel", "derived"
  std::string family;  ///< the family schema used; "" when model_type is missing or unknown
  /// The family's `geometry:` values (docs/SCHEMAS.md), per config object: JSON pointer ("" for the top
  /// level, "/text_config" for a sub-config) -> {dim name: value}. Not part of `config`.
  Json geometry = Json::object();
  /// Which config keys each canonical dim is read from (schemas/dims.yaml with the family's `dims:`),
  /// per config object, as `geometry`: what schemas::ModelDimsOf reads.
  DimKeysByObject dim_keys;
  std::vector<Diag> diags;  ///< warnings and notes (errors are returned as Status instead)
};

/// Resolves `input` the way transformers + EasyDeL do (docs/SCHEMAS.md "Resolution order").
/// Bad input returns a BadInput Status naming the file, the JSON pointer, what was expected and what
/// was found. Never throws.
StatusOr<ResolvedConfig> ResolveConfig(const ConfigInput& input, const ResolveOptions& options, SchemaSet& schemas);

}  // namespace easyplan::schemas

#endif  // EASYPLAN_SCHEMAS_RESOLVER_H_
