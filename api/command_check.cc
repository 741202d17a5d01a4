// `easyplan check CONFIG`: proves a plan by executing it on simulated devices (api/check.h).
#include "api/check_text.h"
#include "api/commands.h"
#include "api/findings_text.h"
#include "core/emit.h"

namespace easyplan::api {

namespace {

std::string CheckDocument(const CommandResult& result, const CommandOptions&) {
  const CheckRun& run = std::get<CheckRun>(result.value);
  return run.plan.HasErrors() ? NoArtifactDocument(run.plan.findings) : EmitJson(CheckToJson(run));
}

// A plan with errors ran nothing: its findings on stderr, and no report. Under MPI only the root reports
// (its exit code is everyone's).
Status ShowCheck(const CommandResult& result, const CommandOptions& options, TerminalOutput& shown) {
  const CheckRun& run = std::get<CheckRun>(result.value);
  if (run.plan.HasErrors()) {
    shown.err = FindingsForTerminal(run.plan.findings, options.verbose);
    return Status();
  }
  if (!run.root) return Status();
  shown.out = options.format == "json" ? CheckDocument(result, options) : CheckText(run);
  return Status();
}

}  // namespace

CommandSpec CheckCommand() {
  return {
      .name = "check",
      .summary = "execute the plan on simulated devices: layout tiling and a sharded-vs-unsharded forward pass",
      .groups = {OptionGroup::kConfig, OptionGroup::kTree, OptionGroup::kRules, OptionGroup::kMesh,
                 OptionGroup::kPipeline},
      .options = {"level", "seed", "check_memory", "max_numeric_devices", "engine", "mpi_timeout", "mpi_start_timeout",
                  "inject", "format", "output"},
      .check = [](const CommandOptions& options) { return CheckedPipeline(options.Check()); },
      .run = [](const RunContext& context, const CheckedCommand& command) -> StatusOr<CommandResult> {
        EP_ASSIGN_OR_RETURN(const Checked<CheckOptions>* checked, command.Pipeline<CheckOptions>());
        EP_ASSIGN_OR_RETURN(CheckRun run, Check(context.model, *checked, context.engine));
        // A plan with errors ran nothing: its findings, and exit 1.
        const bool failed = run.plan.HasErrors() || !run.ok();
        return CommandResult{.outcome = failed ? Outcome::kFindings : Outcome::kOk, .value = std::move(run)};
      },
      .document = CheckDocument,
      .terminal = ShowCheck,
      .engine = [](const CommandOptions& options) { return StartEngine(options.Check()); },
  };
}

}  // namespace easyplan::api
