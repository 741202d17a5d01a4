#ifndef EASYPLAN_CLI_CONFIG_FLAGS_H_
#define EASYPLAN_CLI_CONFIG_FLAGS_H_

// Loading the api::Model a command's config options name (CONFIG, --set, --overrides, --defaults,
// --strict, --schemas-dir: the command table's config group), with the resolver's warnings printed.

#include <memory>

#include "api/environment.h"
#include "api/model.h"
#include "api/options.h"
#include "cli/context.h"

namespace easyplan::cli {

/// The api environment of this run: the context's file system, stdin, data files and limits.
api::Environment EnvironmentOf(Context& ctx);

/// Prints the resolver's warnings (and notes) to ctx.err.
void PrintDiags(Context& ctx, const std::vector<Diag>& diags);

/// Loads and resolves CONFIG (none: EasyDeL's defaults), printing the resolver's warnings (errors under
/// --strict). On failure the Status says why; the caller reports it.
StatusOr<std::shared_ptr<const api::Model>> LoadModel(Context& ctx, const api::ConfigOptions& options);

}  // namespace easyplan::cli

#endif  // EASYPLAN_CLI_CONFIG_FLAGS_H_
