// `easyplan explain CONFIG PATTERN`: for each tensor whose name PATTERN finds, every rule tried, the one
// that matched, the rules it shadows, how its spec resolved, what the correction changed, and which
// devices hold which block (api/explain.h writes it).
#include <utility>

#include "cli/commands.h"

namespace easyplan::cli {

void PrepareExplain(api::CommandOptions& options) {
  // With --tree and no CONFIG, the one positional is the pattern.
  if (options.pattern.empty() && !options.plan.tree.file.empty())
    std::swap(options.pattern, options.plan.config.config);
}

Status RenderExplain(const api::CommandResult& result, const api::CommandOptions& options, Context& ctx) {
  return WriteOutput(ctx, options.output, std::get<api::ExplainValue>(result.value).text);
}

}  // namespace easyplan::cli
