// `easyplan explain CONFIG PATTERN`: every rule tried for the tensors PATTERN finds, the one that
// matched, how its spec resolved, what the correction changed and which devices hold which block.
#include "api/commands.h"
#include "api/explain.h"

namespace easyplan::api {

CommandSpec ExplainCommand() {
  return {
      .name = "explain",
      .summary = "show how the rules and the mesh decide the sharding of matching tensors",
      .groups = {OptionGroup::kConfig, OptionGroup::kTree, OptionGroup::kRules, OptionGroup::kMesh},
      .options = {"pattern", "output"},
      .python_positional = {"pattern"},
      .python_result = PythonResult::kText,
      .python_returns = "the explanation (text)",
      .check = [](const CommandOptions& options) -> StatusOr<std::any> {
        EP_RETURN_IF_ERROR(CheckExplainPattern(options.pattern));
        return CheckedPipeline(options.plan);
      },
      .run = [](const RunContext& context, const CheckedCommand& command) -> StatusOr<CommandResult> {
        EP_ASSIGN_OR_RETURN(const Checked<PlanOptions>* checked, command.Pipeline<PlanOptions>());
        EP_ASSIGN_OR_RETURN(std::string text, Explain(context.model, *checked, command.options.pattern));
        return CommandResult{.value = ExplainValue{std::move(text)}};
      },
      .document = [](const CommandResult& result,
                     const CommandOptions&) { return std::get<ExplainValue>(result.value).text; },
      .terminal =
          [](const CommandResult& result, const CommandOptions&, TerminalOutput& shown) {
            shown.out = std::get<ExplainValue>(result.value).text;
            return Status();
          },
  };
}

}  // namespace easyplan::api
