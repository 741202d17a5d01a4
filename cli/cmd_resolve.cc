// `easyplan resolve CONFIG`: the config compiler's front end.
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/config_input.h"
#include "core/did_you_mean.h"
#include "core/emit.h"
#include "schemas/resolver.h"

namespace easyplan::cli {
namespace {

struct ResolveFlags {
  std::string config;
  std::string format = "json";
  std::string output;
  std::string defaults = "add_basic";
  std::string overrides;
  std::vector<std::string> sets;
  std::optional<int64_t> devices;
  bool provenance = false;
  bool strict = false;
  std::string schemas_dir;
};

Status CheckChoice(const std::string& flag, const std::string& value, const std::vector<std::string>& choices) {
  for (const std::string& choice : choices) {
    if (value == choice) return Status();
  }
  std::string message = flag + " '" + value + "' is not supported";
  if (auto suggestion = SuggestClosest(value, choices)) message += " (did you mean '" + *suggestion + "'?)";
  return Status::BadInput({}, message, {"expected one of " + JoinQuoted(choices)});
}

int RunResolve(const ResolveFlags& flags, Context& ctx) {
  Status status = CheckChoice("--format", flags.format, {"json", "yaml"});
  if (status.ok()) status = CheckChoice("--defaults", flags.defaults, {"add_basic", "init"});
  if (status.ok() && flags.devices && *flags.devices < 1) {
    status = Status::BadInput({}, "--devices must be at least 1, found " + std::to_string(*flags.devices));
  }
  if (!status.ok()) return ReportError(ctx, status);

  auto config = LoadConfigDocument(ctx, flags.config);
  if (!config.ok()) return ReportError(ctx, config.status());
  schemas::ConfigInput input{std::move(*config), std::nullopt, flags.sets};
  if (!flags.overrides.empty()) {
    auto overrides = LoadOverridesDocument(ctx, flags.overrides);
    if (!overrides.ok()) return ReportError(ctx, overrides.status());
    input.overrides = std::move(*overrides);
  }
  schemas::ResolveOptions options;
  options.profile = flags.defaults == "init" ? schemas::DefaultsProfile::kInit : schemas::DefaultsProfile::kAddBasic;
  options.devices = flags.devices;
  options.limits = ctx.limits;

  std::string schemas_dir = flags.schemas_dir.empty() ? ctx.schemas_dir : flags.schemas_dir;
  schemas::SchemaSet schemas(schemas_dir.empty() ? schemas::DataSource::Embedded()
                                                 : schemas::DataSource::Directory(schemas_dir, ctx.fs));
  auto resolved = schemas::ResolveConfig(input, options, schemas);
  if (!resolved.ok()) return ReportError(ctx, resolved.status());

  bool has_warnings = false;
  for (Diag diag : resolved->diags) {
    if (flags.strict && diag.severity == Severity::kWarning) {
      diag.severity = Severity::kError;
      has_warnings = true;
    }
    PrintDiag(ctx, diag);
  }
  if (has_warnings) {
    ctx.err << "easyplan: error: --strict: warnings are errors; nothing written\n";
    return kExitBadInput;
  }

  Json document = resolved->config;
  if (flags.provenance) {
    document = Json::object();
    document["config"] = resolved->config;
    document["provenance"] = resolved->provenance;
  }
  std::string text = flags.format == "yaml" ? EmitYaml(document) : EmitJson(document);
  status = WriteOutput(ctx, flags.output, text);
  if (!status.ok()) return ReportError(ctx, status);
  return kExitOk;
}

}  // namespace

std::function<int(Context&)> AddResolveCommand(CLI::App& app) {
  auto flags = std::make_shared<ResolveFlags>();
  CLI::App* cmd = app.add_subcommand("resolve",
                                     "print the complete config EasyDeL would use, with every default "
                                     "and derived field");
  cmd->add_option("CONFIG", flags->config, "config.json, a directory holding one, or - for stdin")->required();
  cmd->add_option("--format", flags->format, "output format: json or yaml (default json)");
  cmd->add_option("-o,--output", flags->output, "write to FILE (atomically) instead of stdout");
  cmd->add_flag("--provenance", flags->provenance,
                "wrap the output as {config, provenance}: where each top-level value came from");
  cmd->add_option("--defaults", flags->defaults,
                  "EasyDeL defaults for missing attributes: add_basic (a loaded config, the default) or init "
                  "(the EasyDeLBaseConfig constructor)");
  cmd->add_option("--set", flags->sets,
                  "KEY=VALUE override (repeatable); VALUE is JSON or a string; "
                  "dotted keys reach into objects: rope_scaling.factor=8");
  cmd->add_option("--overrides", flags->overrides, "YAML or JSON object of overrides (below --set)");
  cmd->add_option("--devices", flags->devices,
                  "device count: fills the -1 in sharding_axis_dims and checks "
                  "the product");
  cmd->add_flag("--strict", flags->strict, "treat warnings (likely typos, unknown model_type) as errors");
  cmd->add_option("--schemas-dir", flags->schemas_dir,
                  "read schemas/ from this checkout directory instead of the built-in copies");
  return [flags](Context& ctx) { return RunResolve(*flags, ctx); };
}

}  // namespace easyplan::cli
