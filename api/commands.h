#ifndef EASYPLAN_API_COMMANDS_H_
#define EASYPLAN_API_COMMANDS_H_

// The declaration of each command (api/command_table.h), one file each: api/command_<name>.cc. The table
// lists them in the CLI's order (AllCommands).

#include "api/command_table.h"

namespace easyplan::api {

CommandSpec ResolveCommand();
CommandSpec TreeCommand();
CommandSpec PlanCommand();
CommandSpec ExplainCommand();
CommandSpec ValidateCommand();
CommandSpec ActivationsCommand();
CommandSpec MemoryCommand();
CommandSpec ExportCommand();
CommandSpec CheckCommand();
CommandSpec CostCommand();
CommandSpec SuggestCommand();
CommandSpec ReportCommand();

/// Findings as `validate --format json` gives them, for a command that has no artifact to show
/// ("ok": false).
std::string NoArtifactDocument(const std::vector<planner::Finding>& findings);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_COMMANDS_H_
