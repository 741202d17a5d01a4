#ifndef EASYPLAN_CLI_CONFIG_FLAGS_H_
#define EASYPLAN_CLI_CONFIG_FLAGS_H_

// The flags every command that reads a CONFIG shares with `resolve` (--set, --overrides, --defaults,
// --strict, --schemas-dir), and the one function that turns them into a resolved config.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/context.h"
#include "schemas/resolver.h"
#include "schemas/schema_set.h"

namespace easyplan::cli {

struct ConfigFlags {
  std::string config;
  std::string defaults = "add_basic";
  std::string overrides;
  std::vector<std::string> sets;
  std::optional<int64_t> devices;
  bool strict = false;
  std::string schemas_dir;
  /// Print the resolve's warnings (check's tiny config does not: the full config's were printed). Not a
  /// flag; the diags stay in ResolvedConfig::diags either way.
  bool print_diags = true;
};

/// Registers CONFIG (required unless `config_optional`) and the resolve flags on `cmd`.
void AddConfigFlags(CLI::App* cmd, ConfigFlags& flags, bool config_optional = false);

/// The schema files of this run: --schemas-dir, the context's, or the embedded copies.
schemas::SchemaSet MakeSchemaSet(Context& ctx, const ConfigFlags& flags);

/// Loads and resolves CONFIG. Warnings are printed to ctx.err (errors under --strict). On failure the
/// Status says why; the caller reports it.
StatusOr<schemas::ResolvedConfig> ResolveFromFlags(Context& ctx, const ConfigFlags& flags, schemas::SchemaSet& schemas);

/// "--format 'xml' is not supported (did you mean ...)" unless `value` is one of `choices`.
Status CheckChoice(const std::string& flag, const std::string& value, const std::vector<std::string>& choices);

}  // namespace easyplan::cli

#endif  // EASYPLAN_CLI_CONFIG_FLAGS_H_
