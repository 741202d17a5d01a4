// `easyplan export CONFIG --to FORMAT`: the plan in the form another runtime reads (docs/FORMATS.md).
// A plan with errors has no artifact: its findings instead, and exit 1 (Python: PlanError).
#include "api/commands.h"
#include "api/findings_text.h"

namespace easyplan::api {

CommandSpec ExportCommand() {
  return {
      .name = "export",
      .summary =
          "write the plan for another runtime: jax, jax-json, xla-hlo, shardy, torch, hf-tp-plan, json, "
          "megatron, maxtext, rules",
      .groups = {OptionGroup::kConfig, OptionGroup::kTree, OptionGroup::kRules, OptionGroup::kMesh,
                 OptionGroup::kPipeline},
      .options = {"to", "batch", "seq", "microbatches", "export_format", "output"},
      .python_positional = {"to"},
      .python_result = PythonResult::kText,
      .python_returns = "the artifact (text); a plan with errors raises :class:`PlanError`",
      .findings_instead_of_artifact = true,
      .check = [](const CommandOptions& options) { return CheckedPipeline(options.Export()); },
      .run = [](const RunContext& context, const CheckedCommand& command) -> StatusOr<CommandResult> {
        EP_ASSIGN_OR_RETURN(const Checked<ExportOptions>* checked, command.Pipeline<ExportOptions>());
        EP_ASSIGN_OR_RETURN(ExportResult result, Export(context.model, *checked));
        const Outcome outcome = result.failed ? Outcome::kFindings : Outcome::kOk;
        return CommandResult{.outcome = outcome, .value = std::move(result)};
      },
      .document =
          [](const CommandResult& result, const CommandOptions&) {
            const ExportResult& value = std::get<ExportResult>(result.value);
            return value.failed ? NoArtifactDocument(value.findings) : value.text;
          },
      // The findings on stderr; a plan with errors has no artifact, and nothing is written.
      .terminal =
          [](const CommandResult& result, const CommandOptions& options, TerminalOutput& shown) {
            const ExportResult& value = std::get<ExportResult>(result.value);
            shown.err = FindingsForTerminal(value.findings, options.verbose);
            if (!value.failed) shown.out = value.text;
            return Status();
          },
  };
}

}  // namespace easyplan::api
