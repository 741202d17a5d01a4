#ifndef EASYPLAN_CLI_APP_H_
#define EASYPLAN_CLI_APP_H_

#include "cli/context.h"

namespace easyplan::cli {

/// Parses argv, runs the chosen subcommand and returns the exit code. Usage errors (unknown
/// subcommand or flag, missing argument) print a did-you-mean where one fits and return 2.
int RunApp(int argc, const char* const* argv, Context& ctx);

}  // namespace easyplan::cli

#endif  // EASYPLAN_CLI_APP_H_
