// `easyplan cost CONFIG --hardware H --mode M --batch B --seq S`: one configuration's estimated step
// time and its breakdown (docs/COST.md). Exit 1 when the plan has errors or the step does not fit.
#include "api/commands.h"
#include "api/cost_text.h"
#include "api/findings_text.h"
#include "core/emit.h"

namespace easyplan::api {

namespace {

std::string CostDocument(const CommandResult& result, const CommandOptions&) {
  const CostResult& value = std::get<CostResult>(result.value);
  return value.estimate ? EmitJson(CostToJson(value)) : NoArtifactDocument(value.plan.findings);
}

// The figures whenever the plan can be priced; a plan with errors adds its findings on stderr. Without
// --mode the step is a training step, and the text says so.
Status ShowCost(const CommandResult& result, const CommandOptions& options, TerminalOutput& shown) {
  const CostResult& value = std::get<CostResult>(result.value);
  if (value.plan.HasErrors()) shown.err = FindingsForTerminal(value.plan.findings, options.verbose);
  if (!value.estimate) return Status();
  shown.out = options.format == "json" ? CostDocument(result, options)
                                       : CostText(value, options.Given("mode"), options.verbose);
  return Status();
}

}  // namespace

CommandSpec CostCommand() {
  return {
      .name = "cost",
      .summary = "estimated step time on an accelerator: compute, communication, overlap, tokens/s, MFU, memory",
      .groups = {OptionGroup::kConfig, OptionGroup::kTree, OptionGroup::kRules, OptionGroup::kMesh,
                 OptionGroup::kPipeline, OptionGroup::kStep, OptionGroup::kStepState, OptionGroup::kHardware,
                 OptionGroup::kPricing},
      .options = {"format", "output", "torus"},
      .check = [](const CommandOptions& options) { return CheckedPipeline(options.Cost()); },
      .run = [](const RunContext& context, const CheckedCommand& command) -> StatusOr<CommandResult> {
        EP_ASSIGN_OR_RETURN(const Checked<CostOptions>* checked, command.Pipeline<CostOptions>());
        EP_ASSIGN_OR_RETURN(CostResult result, Cost(context.model, *checked));
        // The figures whenever the plan can be priced; a plan with errors adds its findings and exit 1.
        const bool failed = !result.estimate || !result.estimate->fits || result.plan.HasErrors();
        return CommandResult{.outcome = failed ? Outcome::kFindings : Outcome::kOk, .value = std::move(result)};
      },
      .document = CostDocument,
      .terminal = ShowCost,
  };
}

}  // namespace easyplan::api
