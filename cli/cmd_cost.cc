// `easyplan cost CONFIG --hardware H --mode train|serve --batch B --seq S`: one configuration's estimated
// step time and its breakdown (docs/COST.md). Exit 1 when the plan has errors or the step does not fit.
#include <fmt/format.h>

#include <memory>

#include "api/cost.h"
#include "cli/commands.h"
#include "cli/cost_format.h"
#include "cli/pipeline_flags.h"
#include "cli/plan_format.h"
#include "core/emit.h"

namespace easyplan::cli {
namespace {

struct CostCommandFlags {
  api::CostOptions cost;
  std::string format = "table";
  std::string output;
  bool mode_given = false;  ///< else --mode is train, and the output says so
};

StatusOr<int> RunCost(const CostCommandFlags& flags, Context& ctx) {
  EP_RETURN_IF_ERROR(CheckChoice("--format", flags.format, {"table", "json"}));
  EP_RETURN_IF_ERROR(api::CheckCostOptions(flags.cost));
  EP_RETURN_IF_ERROR(api::CheckPlanOptions(flags.cost.plan));
  EP_ASSIGN_OR_RETURN(std::shared_ptr<const api::Model> model, LoadModel(ctx, flags.cost.plan.config));
  EP_ASSIGN_OR_RETURN(api::CostResult result, api::Cost(model, flags.cost));
  // The figures whenever the plan can be priced; a plan with errors adds its findings and exit 1.
  const bool errors = result.plan.HasErrors();
  if (errors) ctx.err << api::FindingsForTerminal(result.plan.findings, ctx.verbose);
  if (!result.estimate) return kExitFindings;
  std::string text;
  if (flags.format == "json") {
    text = EmitJson(api::CostToJson(result));
  } else {
    text = CostText(result, flags.mode_given);
  }
  EP_RETURN_IF_ERROR(WriteOutput(ctx, flags.output, text));
  return result.estimate->fits && !errors ? kExitOk : kExitFindings;
}

}  // namespace

std::function<int(Context&)> AddCostCommand(CLI::App& app) {
  auto flags = std::make_shared<CostCommandFlags>();
  CLI::App* cmd = app.add_subcommand(
      "cost", "estimated step time on an accelerator: compute, communication, overlap, tokens/s, MFU, memory");
  AddPlanFlags(cmd, flags->cost.plan);
  CLI::Option* mode = AddMemoryFlags(cmd, flags->cost.memory, /*mode_defaults_to_train=*/true);
  AddStepPricingFlags(cmd, flags->cost.microbatches, flags->cost.decode, flags->cost.precision);
  cmd->add_option("--format", flags->format, "table (default) or json");
  cmd->add_option("-o,--output", flags->output, "write to FILE (atomically) instead of stdout");
  return [flags, mode](Context& ctx) {
    flags->mode_given = mode->count() > 0;
    StatusOr<int> code = RunCost(*flags, ctx);
    return code.ok() ? *code : ReportError(ctx, code.status());
  };
}

}  // namespace easyplan::cli
