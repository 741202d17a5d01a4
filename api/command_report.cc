// `easyplan report CONFIG [plan options] [--mode M --batch B --seq S --hardware H] -o plan.html`: one
// self-contained HTML page of the plan (docs/REPORT.md). Exit 1 when the plan has errors or the step
// does not fit; the page is made either way.
#include "api/commands.h"

namespace easyplan::api {

CommandSpec ReportCommand() {
  return {
      .name = "report",
      .summary =
          "one self-contained HTML page of the plan: mesh, memory, step time per layer, the pipeline's "
          "timeline, tensors, findings",
      .groups = {OptionGroup::kConfig, OptionGroup::kTree, OptionGroup::kRules, OptionGroup::kMesh,
                 OptionGroup::kPipeline, OptionGroup::kStep, OptionGroup::kStepState, OptionGroup::kHardware,
                 OptionGroup::kPricing},
      .options = {"output", "torus"},
      .python_positional = {"output"},
      .python_result = PythonResult::kText,
      .python_returns = "the page (HTML text); ``output`` also writes it",
      .check = [](const CommandOptions& options) { return CheckedPipeline(options.Report()); },
      .run = [](const RunContext& context, const CheckedCommand& command) -> StatusOr<CommandResult> {
        EP_ASSIGN_OR_RETURN(const Checked<ReportOptions>* checked, command.Pipeline<ReportOptions>());
        EP_ASSIGN_OR_RETURN(ReportResult result, Report(context.model, *checked));
        ReportValue value;
        EP_ASSIGN_OR_RETURN(value.page, ReportPage(result.data, context.model->env().limits));
        const Outcome outcome = result.Failed() ? Outcome::kFindings : Outcome::kOk;
        return CommandResult{.outcome = outcome, .value = std::move(value)};
      },
      .document = [](const CommandResult& result,
                     const CommandOptions&) { return std::get<ReportValue>(result.value).page; },
      .files =
          [](const CommandResult& result, const CommandOptions& options) {
            std::vector<std::pair<std::string, std::string>> files;
            if (!options.output.empty()) files.emplace_back(options.output, std::get<ReportValue>(result.value).page);
            return files;
          },
      // The CLI's -o is Python's output=: the page goes there, or to stdout.
      .terminal =
          [](const CommandResult& result, const CommandOptions&, TerminalOutput& shown) {
            shown.out = std::get<ReportValue>(result.value).page;
            return Status();
          },
  };
}

}  // namespace easyplan::api
