// `easyplan plan CONFIG`: which slice of which tensor each device holds, and the bytes per device.
#include "api/assumptions.h"
#include "api/commands.h"
#include "api/findings_json.h"
#include "api/findings_text.h"
#include "api/plan_inputs.h"
#include "api/plan_json.h"
#include "api/plan_text.h"

namespace easyplan::api {

std::string NoArtifactDocument(const std::vector<planner::Finding>& findings) {
  return FindingsToJsonText(findings, "  \"ok\": false,\n");
}

namespace {

std::string PlanDocument(const CommandResult& result, const CommandOptions& options) {
  return PlanResultToJsonText(*std::get<std::shared_ptr<const PlanResult>>(result.value),
                              {options.rank, options.summary});
}

// The figures whenever the plan can be laid out, as memory and cost show theirs: a plan with errors adds
// its findings on stderr and exit 1 (a summary of what is wrong is still worth seeing).
Status ShowPlan(const CommandResult& result, const CommandOptions& options, TerminalOutput& shown) {
  const PlanResult& plan = *std::get<std::shared_ptr<const PlanResult>>(result.value);
  shown.err = FindingsForTerminal(plan.plan.findings, options.verbose);
  if (options.format == "json") {
    shown.out = PlanDocument(result, options);
    return Status();
  }
  PlanView table = ViewOfPlan(plan, {options.rank, options.summary});
  table.weights = QuantizedWeights(*plan.inputs.model, plan.inputs.tree_spec);
  shown.out = PlanToTable(table);
  return Status();
}

}  // namespace

CommandSpec PlanCommand() {
  return {
      .name = "plan",
      .summary = "lay the partition rules on the mesh: the shards and bytes of every device",
      .groups = {OptionGroup::kConfig, OptionGroup::kTree, OptionGroup::kRules, OptionGroup::kMesh,
                 OptionGroup::kPipeline},
      .options = {"rank", "summary", "microbatches", "format", "output"},
      .python_result = PythonResult::kPlan,
      .python_returns = "a :class:`Plan`",
      .check = [](const CommandOptions& options) { return CheckedPipeline(options.plan); },
      .run = [](const RunContext& context, const CheckedCommand& command) -> StatusOr<CommandResult> {
        EP_ASSIGN_OR_RETURN(const Checked<PlanOptions>* checked, command.Pipeline<PlanOptions>());
        const CommandOptions& options = command.options;
        EP_ASSIGN_OR_RETURN(PlanResult result, PlanModel(context.model, *checked, {options.rank, options.summary}));
        const Outcome outcome = result.plan.HasErrors() ? Outcome::kFindings : Outcome::kOk;
        return CommandResult{.outcome = outcome, .value = std::make_shared<const PlanResult>(std::move(result))};
      },
      .document = PlanDocument,
      .terminal = ShowPlan,
  };
}

}  // namespace easyplan::api
