#ifndef EASYPLAN_CLI_COMMANDS_H_
#define EASYPLAN_CLI_COMMANDS_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "cli/context.h"

namespace easyplan::cli {

/// One subcommand: `add` registers its flags on the app and returns the function that runs it after
/// parsing (the flags struct lives in that closure).
struct Command {
  std::string name;
  std::string help;
  std::function<std::function<int(Context&)>(CLI::App& app)> add;
};

/// Every subcommand, in the order `easyplan --help` lists them.
const std::vector<Command>& AllCommands();

/// Registers `resolve`; defined in cmd_resolve.cc.
std::function<int(Context&)> AddResolveCommand(CLI::App& app);

/// Registers `tree`; defined in cmd_tree.cc.
std::function<int(Context&)> AddTreeCommand(CLI::App& app);

/// Registers `plan`, `explain` and `validate`; defined in cmd_plan.cc, cmd_explain.cc, cmd_validate.cc.
std::function<int(Context&)> AddPlanCommand(CLI::App& app);
std::function<int(Context&)> AddExplainCommand(CLI::App& app);
std::function<int(Context&)> AddValidateCommand(CLI::App& app);

/// Registers `activations`; defined in cmd_activations.cc.
std::function<int(Context&)> AddActivationsCommand(CLI::App& app);

/// Registers `export`; defined in cmd_export.cc.
std::function<int(Context&)> AddExportCommand(CLI::App& app);

/// Registers `memory`; defined in cmd_memory.cc.
std::function<int(Context&)> AddMemoryCommand(CLI::App& app);

/// Registers `check`; defined in cmd_check.cc.
std::function<int(Context&)> AddCheckCommand(CLI::App& app);

/// Registers `cost`; defined in cmd_cost.cc.
std::function<int(Context&)> AddCostCommand(CLI::App& app);

/// Registers `suggest`; defined in cmd_suggest.cc.
std::function<int(Context&)> AddSuggestCommand(CLI::App& app);

/// Registers `report`; defined in cmd_report.cc.
std::function<int(Context&)> AddReportCommand(CLI::App& app);

}  // namespace easyplan::cli

#endif  // EASYPLAN_CLI_COMMANDS_H_
