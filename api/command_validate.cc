// `easyplan validate CONFIG`: the plan's findings for CI, with the memory budget and the activation
// findings of a runtime mode; exit 1 on errors (or warnings under --strict).
#include "api/commands.h"

namespace easyplan::api {

CommandSpec ValidateCommand() {
  return {
      .name = "validate",
      .summary = "check a plan for CI: unmatched tensors, bad axes, indivisible dims, dead rules, memory",
      .groups = {OptionGroup::kConfig, OptionGroup::kTree, OptionGroup::kRules, OptionGroup::kMesh,
                 OptionGroup::kPipeline, OptionGroup::kStep, OptionGroup::kStepState, OptionGroup::kHardware},
      .options = {"microbatches", "format", "output"},
      .check = [](const CommandOptions& options) { return CheckedPipeline(options.Validate()); },
      .run = [](const RunContext& context, const CheckedCommand& command) -> StatusOr<CommandResult> {
        EP_ASSIGN_OR_RETURN(const Checked<ValidateOptions>* checked, command.Pipeline<ValidateOptions>());
        EP_ASSIGN_OR_RETURN(ValidateResult result, Validate(context.model, *checked));
        const Outcome outcome = result.failed ? Outcome::kFindings : Outcome::kOk;
        return CommandResult{.outcome = outcome, .value = std::move(result)};
      },
      .document = [](const CommandResult& result,
                     const CommandOptions&) { return ValidateToJsonText(std::get<ValidateResult>(result.value)); },
  };
}

}  // namespace easyplan::api
