#include "cli/config_flags.h"

#include "api/plan_inputs.h"

namespace easyplan::cli {

void AddConfigFlags(CLI::App* cmd, api::ConfigOptions& options, bool config_optional) {
  auto* config = cmd->add_option("CONFIG", options.config, "config.json, a directory holding one, or - for stdin");
  if (!config_optional) config->required();
  cmd->add_option("--defaults", options.defaults,
                  "EasyDeL defaults for missing attributes: add_basic (a loaded config, the default) or init "
                  "(the EasyDeLBaseConfig constructor)");
  cmd->add_option("--set", options.sets,
                  "KEY=VALUE override (repeatable); VALUE is JSON or a string; "
                  "dotted keys reach into objects: rope_scaling.factor=8");
  cmd->add_option("--overrides", options.overrides, "YAML or JSON object of overrides (below --set)");
  cmd->add_option("--devices", options.devices,
                  "device count: fills the -1 in sharding_axis_dims and checks "
                  "the product");
  cmd->add_flag("--strict", options.strict, "treat warnings (likely typos, unknown model_type) as errors");
  cmd->add_option("--schemas-dir", options.schemas_dir,
                  "read schemas/ from this checkout directory instead of the built-in copies");
}

api::Environment EnvironmentOf(Context& ctx) {
  api::Environment env;
  env.fs = std::shared_ptr<const FileSystem>(std::shared_ptr<const void>(), &ctx.fs);  // not owned
  env.in = &ctx.in;
  env.schemas_dir = ctx.schemas_dir;
  env.limits = ctx.limits;
  env.warn = [&ctx](const Diag& warning) { PrintDiag(ctx, warning); };
  return env;
}

void PrintDiags(Context& ctx, const std::vector<Diag>& diags) {
  for (const Diag& diag : diags) PrintDiag(ctx, diag);
}

StatusOr<std::shared_ptr<const api::Model>> LoadModel(Context& ctx, const api::ConfigOptions& options) {
  std::vector<Diag> diags;
  StatusOr<std::shared_ptr<const api::Model>> model = api::LoadModel(EnvironmentOf(ctx), options, &diags);
  PrintDiags(ctx, diags);
  return model;
}

}  // namespace easyplan::cli
