// `easyplan explain CONFIG PATTERN`: for each tensor whose name PATTERN finds, every rule tried, the one
// that matched, the rules it shadows, how its spec resolved, what the correction changed, and which
// devices hold which block.
#include <memory>

#include "api/explain.h"
#include "cli/commands.h"
#include "cli/pipeline_flags.h"

namespace easyplan::cli {
namespace {

struct ExplainFlags {
  api::PlanOptions plan;
  std::string pattern;
  std::string output;
};

StatusOr<int> RunExplain(ExplainFlags flags, Context& ctx) {
  // With --tree and no CONFIG, the one positional is the pattern.
  if (flags.pattern.empty() && !flags.plan.tree.empty()) std::swap(flags.pattern, flags.plan.config.config);
  EP_RETURN_IF_ERROR(api::CheckExplainPattern(flags.pattern));
  EP_RETURN_IF_ERROR(api::CheckPlanOptions(flags.plan));
  EP_ASSIGN_OR_RETURN(std::shared_ptr<const api::Model> model, LoadModel(ctx, flags.plan.config));
  EP_ASSIGN_OR_RETURN(std::string out, api::Explain(model, flags.plan, flags.pattern));
  EP_RETURN_IF_ERROR(WriteOutput(ctx, flags.output, out));
  return kExitOk;
}

}  // namespace

std::function<int(Context&)> AddExplainCommand(CLI::App& app) {
  auto flags = std::make_shared<ExplainFlags>();
  CLI::App* cmd =
      app.add_subcommand("explain", "show how the rules and the mesh decide the sharding of matching tensors");
  AddPlanFlags(cmd, flags->plan);
  cmd->add_option("PATTERN", flags->pattern, "regex searched in tensor names (unanchored)");
  cmd->add_option("-o,--output", flags->output, "write to FILE (atomically) instead of stdout");
  return [flags](Context& ctx) {
    StatusOr<int> code = RunExplain(*flags, ctx);
    return code.ok() ? *code : ReportError(ctx, code.status());
  };
}

}  // namespace easyplan::cli
