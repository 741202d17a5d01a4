#ifndef EASYPLAN_CLI_RUN_COMMAND_H_
#define EASYPLAN_CLI_RUN_COMMAND_H_

// How the CLI runs a command of the command table (api/command_table.h), the same way for every one:
// its checks, the model, its run (on its engine, when it declares one), and what it shows
// (CommandSpec::terminal) written to the streams and files; then the one place an outcome becomes an exit
// code. The CLI keeps no list of commands of its own: what a command shows is declared with the command.

#include "api/command_table.h"
#include "cli/context.h"

namespace easyplan::cli {

/// The exit code of a run: 0 ok, 1 findings, 2 bad input (its message printed), 3 internal error.
int ExitCode(const StatusOr<api::Outcome>& outcome, Context& ctx);

/// Writes what `spec` shows of `result` (CommandSpec::terminal): the findings and notes to ctx.err, then
/// the output (to -o or stdout) and the files beside it, all or none (WriteOutputs).
Status ShowResult(const api::CommandSpec& spec, const api::CommandResult& result, const api::CommandOptions& options,
                  Context& ctx);

/// Runs `spec` as parsed: its engine (CommandSpec::engine; only its root process writes), its option
/// checks, the model (its warnings printed), the run and ShowResult. Returns the exit code.
int RunCommandLine(const api::CommandSpec& spec, const api::CommandOptions& options, Context& ctx);

}  // namespace easyplan::cli

#endif  // EASYPLAN_CLI_RUN_COMMAND_H_
