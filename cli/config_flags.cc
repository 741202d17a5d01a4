#include "cli/config_flags.h"

#include "api/plan_inputs.h"

namespace easyplan::cli {

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
