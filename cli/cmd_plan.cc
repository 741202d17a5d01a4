// `easyplan plan CONFIG`: which slice of which tensor each device holds, and the bytes per device.
#include "api/assumptions.h"
#include "api/findings_text.h"
#include "cli/commands.h"
#include "cli/plan_format.h"

namespace easyplan::cli {

Status RenderPlan(const api::CommandResult& result, const api::CommandOptions& options, Context& ctx) {
  const api::PlanResult& plan = *std::get<std::shared_ptr<const api::PlanResult>>(result.value);
  // The figures whenever the plan can be laid out, as memory and cost print theirs: a plan with errors
  // adds its findings on stderr and exit 1 (a summary of what is wrong is still worth seeing).
  ctx.err << api::FindingsForTerminal(plan.plan.findings, ctx.verbose);
  if (options.format == "json") {
    return WriteOutput(ctx, options.output, api::PlanResultToJsonText(plan, {options.rank, options.summary}));
  }
  PlanView table = api::ViewOfPlan(plan, {options.rank, options.summary});
  table.weights = api::QuantizedWeights(*plan.inputs.model, plan.inputs.tree_spec);
  return WriteOutput(ctx, options.output, PlanToTable(table));
}

}  // namespace easyplan::cli
