#include "cli/run_command.h"

#include <memory>
#include <ostream>
#include <vector>

#include "cli/config_flags.h"

namespace easyplan::cli {

int ExitCode(const StatusOr<api::Outcome>& outcome, Context& ctx) {
  if (!outcome.ok()) return ReportError(ctx, outcome.status());
  return *outcome == api::Outcome::kOk ? kExitOk : kExitFindings;
}

Status ShowResult(const api::CommandSpec& spec, const api::CommandResult& result, const api::CommandOptions& options,
                  Context& ctx) {
  if (!spec.terminal) return Status::Internal("'" + std::string(spec.name) + "' declares nothing to show");
  api::TerminalOutput shown;
  const Status status = spec.terminal(result, options, shown);
  // What was shown before a failure is printed before its error, as it happened.
  ctx.err << shown.err;
  for (const Diag& note : shown.notes) PrintDiag(ctx, note);
  EP_RETURN_IF_ERROR(status);
  std::vector<Output> outputs;
  if (shown.out) outputs.push_back({options.output, "-o", *shown.out});
  for (const api::TerminalFile& file : shown.files) outputs.push_back({file.path, file.flag, file.text});
  if (outputs.empty()) return Status();  // nothing to write: not even an empty -o file
  return WriteOutputs(ctx, outputs);
}

namespace {

StatusOr<api::Outcome> Run(const api::CommandSpec& spec, const api::CommandOptions& options, Context& ctx,
                           kernels::Engine* engine) {
  EP_ASSIGN_OR_RETURN(const api::CheckedCommand checked, api::CheckCommandOptions(spec, options));
  const api::ConfigOptions config = spec.model_config ? spec.model_config(options) : options.plan.config;
  EP_ASSIGN_OR_RETURN(std::shared_ptr<const api::Model> model, LoadModel(ctx, config));
  EP_ASSIGN_OR_RETURN(api::CommandResult result, api::RunCommand(spec, {model, engine}, checked));
  EP_RETURN_IF_ERROR(ShowResult(spec, result, options, ctx));
  return result.outcome;
}

}  // namespace

int RunCommandLine(const api::CommandSpec& spec, const api::CommandOptions& options, Context& ctx) {
  if (!spec.engine) return ExitCode(Run(spec, options, ctx, nullptr), ctx);
  // The engine starts first (MPI under mpirun) and checks its own options. Only the root (every
  // in-process run) writes anything: the other ranks get a context whose streams drop it, and every rank
  // agrees on the root's exit code (kernels/engine.h).
  StatusOr<std::unique_ptr<kernels::Engine>> engine = spec.engine(options);
  if (!engine.ok()) return ExitCode(engine.status(), ctx);
  std::ostream dropped(nullptr);
  Context quiet{ctx.fs, ctx.in, dropped, dropped, ctx.schemas_dir, ctx.limits, ctx.verbose};
  Context& here = (*engine)->root() ? ctx : quiet;
  return (*engine)->AgreeExitCode(ExitCode(Run(spec, options, here, engine->get()), here));
}

}  // namespace easyplan::cli
