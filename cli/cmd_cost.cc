// `easyplan cost CONFIG --hardware H --mode train|serve --batch B --seq S`: one configuration's estimated
// step time and its breakdown (docs/COST.md). Exit 1 when the plan has errors or the step does not fit.
#include <fmt/format.h>

#include <memory>

#include "api/cost.h"
#include "api/findings_text.h"
#include "cli/commands.h"
#include "cli/cost_format.h"
#include "cli/plan_format.h"
#include "core/emit.h"

namespace easyplan::cli {

Status RenderCost(const api::CommandResult& run, const api::CommandOptions& options, Context& ctx) {
  const api::CostResult& result = std::get<api::CostResult>(run.value);
  // The figures whenever the plan can be priced; a plan with errors adds its findings and exit 1.
  if (result.plan.HasErrors()) ctx.err << api::FindingsForTerminal(result.plan.findings, ctx.verbose);
  if (!result.estimate) return Status();
  // Without --mode the step is a training step, and the text says so.
  const std::string text = options.format == "json" ? EmitJson(api::CostToJson(result))
                                                    : CostText(result, options.Given("mode"), ctx.verbose);
  return WriteOutput(ctx, options.output, text);
}

}  // namespace easyplan::cli
