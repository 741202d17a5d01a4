#include "cli/config_flags.h"

#include "cli/config_input.h"
#include "core/did_you_mean.h"

namespace easyplan::cli {

void AddConfigFlags(CLI::App* cmd, ConfigFlags& flags, bool config_optional) {
  auto* config = cmd->add_option("CONFIG", flags.config, "config.json, a directory holding one, or - for stdin");
  if (!config_optional) config->required();
  cmd->add_option("--defaults", flags.defaults,
                  "EasyDeL defaults for missing attributes: add_basic (a loaded config, the default) or init "
                  "(the EasyDeLBaseConfig constructor)");
  cmd->add_option("--set", flags.sets,
                  "KEY=VALUE override (repeatable); VALUE is JSON or a string; "
                  "dotted keys reach into objects: rope_scaling.factor=8");
  cmd->add_option("--overrides", flags.overrides, "YAML or JSON object of overrides (below --set)");
  cmd->add_option("--devices", flags.devices,
                  "device count: fills the -1 in sharding_axis_dims and checks "
                  "the product");
  cmd->add_flag("--strict", flags.strict, "treat warnings (likely typos, unknown model_type) as errors");
  cmd->add_option("--schemas-dir", flags.schemas_dir,
                  "read schemas/ from this checkout directory instead of the built-in copies");
}

schemas::SchemaSet MakeSchemaSet(Context& ctx, const ConfigFlags& flags) {
  std::string dir = flags.schemas_dir.empty() ? ctx.schemas_dir : flags.schemas_dir;
  return schemas::SchemaSet(dir.empty() ? schemas::DataSource::Embedded()
                                        : schemas::DataSource::Directory(dir, ctx.fs));
}

Status CheckChoice(const std::string& flag, const std::string& value, const std::vector<std::string>& choices) {
  for (const std::string& choice : choices) {
    if (value == choice) return Status();
  }
  std::string message = flag + " '" + value + "' is not supported";
  if (auto suggestion = SuggestClosest(value, choices)) message += " (did you mean '" + *suggestion + "'?)";
  return Status::BadInput({}, message, {"expected one of " + JoinQuoted(choices)});
}

StatusOr<schemas::ResolvedConfig> ResolveFromFlags(Context& ctx, const ConfigFlags& flags,
                                                   schemas::SchemaSet& schemas) {
  EP_RETURN_IF_ERROR(CheckChoice("--defaults", flags.defaults, {"add_basic", "init"}));
  if (flags.devices && *flags.devices < 1) {
    return Status::BadInput({}, "--devices must be at least 1, found " + std::to_string(*flags.devices));
  }
  EP_ASSIGN_OR_RETURN(Document config, LoadConfigDocument(ctx, flags.config));
  schemas::ConfigInput input{std::move(config), std::nullopt, flags.sets};
  if (!flags.overrides.empty()) {
    EP_ASSIGN_OR_RETURN(Document overrides, LoadOverridesDocument(ctx, flags.overrides));
    input.overrides = std::move(overrides);
  }
  schemas::ResolveOptions options;
  options.profile = flags.defaults == "init" ? schemas::DefaultsProfile::kInit : schemas::DefaultsProfile::kAddBasic;
  options.devices = flags.devices;
  options.limits = ctx.limits;
  EP_ASSIGN_OR_RETURN(schemas::ResolvedConfig resolved, schemas::ResolveConfig(input, options, schemas));
  bool has_warnings = false;
  for (Diag diag : resolved.diags) {
    if (flags.strict && diag.severity == Severity::kWarning) {
      diag.severity = Severity::kError;
      has_warnings = true;
    }
    if (flags.print_diags) PrintDiag(ctx, diag);
  }
  if (has_warnings) return Status::BadInput({}, "--strict: warnings are errors; nothing written");
  return resolved;
}

}  // namespace easyplan::cli
