#ifndef EASYPLAN_CLI_COMMANDS_H_
#define EASYPLAN_CLI_COMMANDS_H_

// How the CLI shows each command of the command table (api/command_table.h). The flags, --help and
// the checks of every option come from that table (cli/app.cc); here is only what is the CLI's own:
// each command's renderer (cmd_<name>.cc: tables, text, JUnit, ...), and the one place an outcome
// becomes an exit code.

#include <string_view>
#include <vector>

#include "api/check.h"
#include "api/command_table.h"
#include "cli/context.h"

namespace easyplan::cli {

struct Command {
  std::string_view name;  ///< a name of api::AllCommands()
  /// Writes `result` as `options` say (stdout or -o, findings on stderr). The exit code is the outcome's.
  Status (*render)(const api::CommandResult& result, const api::CommandOptions& options, Context& ctx) = nullptr;
  /// What only the command line needs after parsing (explain: with --tree and no CONFIG, the one
  /// positional is the pattern).
  void (*prepare)(api::CommandOptions& options) = nullptr;
  /// Replaces RunCommandLine when the command needs more around its run (check: its engine).
  int (*drive)(const api::CommandSpec& spec, const api::CommandOptions& options, Context& ctx) = nullptr;
};

/// Every command's renderer, in api::AllCommands() order.
const std::vector<Command>& AllCommands();

/// The exit code of a run: 0 ok, 1 findings, 2 bad input (its message printed), 3 internal error.
int ExitCode(const StatusOr<api::Outcome>& outcome, Context& ctx);

/// Runs `spec` as parsed: its option checks, the model (its warnings printed), the pipeline (on
/// `engine` for check) and the renderer. Returns the exit code.
int RunCommandLine(const api::CommandSpec& spec, const api::CommandOptions& options, Context& ctx,
                   kernels::Engine* engine = nullptr);

Status RenderResolve(const api::CommandResult& result, const api::CommandOptions& options, Context& ctx);
Status RenderTree(const api::CommandResult& result, const api::CommandOptions& options, Context& ctx);
Status RenderPlan(const api::CommandResult& result, const api::CommandOptions& options, Context& ctx);
Status RenderExplain(const api::CommandResult& result, const api::CommandOptions& options, Context& ctx);
void PrepareExplain(api::CommandOptions& options);
Status RenderValidate(const api::CommandResult& result, const api::CommandOptions& options, Context& ctx);
Status RenderActivations(const api::CommandResult& result, const api::CommandOptions& options, Context& ctx);
Status RenderMemory(const api::CommandResult& result, const api::CommandOptions& options, Context& ctx);
Status RenderExport(const api::CommandResult& result, const api::CommandOptions& options, Context& ctx);
Status RenderCheck(const api::CommandResult& result, const api::CommandOptions& options, Context& ctx);
int DriveCheck(const api::CommandSpec& spec, const api::CommandOptions& options, Context& ctx);
Status RenderCost(const api::CommandResult& result, const api::CommandOptions& options, Context& ctx);
Status RenderSuggest(const api::CommandResult& result, const api::CommandOptions& options, Context& ctx);
Status RenderReport(const api::CommandResult& result, const api::CommandOptions& options, Context& ctx);

}  // namespace easyplan::cli

#endif  // EASYPLAN_CLI_COMMANDS_H_
