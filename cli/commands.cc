#include "cli/commands.h"

#include "cli/config_flags.h"

namespace easyplan::cli {

const std::vector<Command>& AllCommands() {
  static const std::vector<Command> kCommands = {
      {"resolve", RenderResolve},
      {"tree", RenderTree},
      {"plan", RenderPlan},
      {"explain", RenderExplain, PrepareExplain},
      {"validate", RenderValidate},
      {"activations", RenderActivations},
      {"memory", RenderMemory},
      {"export", RenderExport},
      {"check", RenderCheck, nullptr, DriveCheck},
      {"cost", RenderCost},
      {"suggest", RenderSuggest},
      {"report", RenderReport},
  };
  return kCommands;
}

int ExitCode(const StatusOr<api::Outcome>& outcome, Context& ctx) {
  if (!outcome.ok()) return ReportError(ctx, outcome.status());
  return *outcome == api::Outcome::kOk ? kExitOk : kExitFindings;
}

namespace {

StatusOr<api::Outcome> Run(const api::CommandSpec& spec, const Command& command, const api::CommandOptions& options,
                           Context& ctx, kernels::Engine* engine) {
  EP_ASSIGN_OR_RETURN(const api::CheckedCommand checked, api::CheckCommandOptions(spec, options));
  const api::ConfigOptions config = spec.model_config ? spec.model_config(options) : options.plan.config;
  EP_ASSIGN_OR_RETURN(std::shared_ptr<const api::Model> model, LoadModel(ctx, config));
  EP_ASSIGN_OR_RETURN(api::CommandResult result, api::RunCommand(spec, {model, engine}, checked));
  EP_RETURN_IF_ERROR(command.render(result, options, ctx));
  return result.outcome;
}

}  // namespace

int RunCommandLine(const api::CommandSpec& spec, const api::CommandOptions& options, Context& ctx,
                   kernels::Engine* engine) {
  for (const Command& command : AllCommands()) {
    if (command.name == spec.name) return ExitCode(Run(spec, command, options, ctx, engine), ctx);
  }
  return ReportError(ctx, Status::Internal("the CLI has no renderer for '" + std::string(spec.name) + "'"));
}

}  // namespace easyplan::cli
