// `easyplan validate CONFIG`: the plan's findings for CI, with the memory budget and the activation
// findings of a runtime mode; exit 1 on errors (or warnings under --strict).
#include <fmt/format.h>

#include "api/commands.h"
#include "api/findings_ci.h"
#include "api/findings_text.h"
#include "core/human.h"

namespace easyplan::api {
namespace {

std::string ValidateDocument(const CommandResult& result, const CommandOptions&) {
  return ValidateToJsonText(std::get<ValidateResult>(result.value));
}

// The findings and a verdict line (text), or the forms CI reads: JSON, JUnit XML, GitHub annotations.
Status ShowValidated(const CommandResult& run, const CommandOptions& options, TerminalOutput& shown) {
  const ValidateResult& result = std::get<ValidateResult>(run.value);
  const std::string& format = options.format;
  if (format == "json") {
    shown.out = ValidateDocument(run, options);
    return Status();
  }
  if (format == "junit") {
    shown.out = FindingsToJunit(result.findings, result.strict);
    return Status();
  }
  if (format == "github") {
    shown.out = FindingsToGithub(result.findings, result.builtin_rules, result.config_file);
    return Status();
  }
  std::string whole_memory;  // with a whole-memory budget: the worst device's total
  if (result.worst_memory) {
    whole_memory = fmt::format("; {} to {} (device {})", HumanBytesBinary(result.worst_memory->total),
                               result.memory_mode, result.worst_memory->id);
  }
  std::string text = FindingsForTerminal(result.findings, options.verbose);
  text += fmt::format(
      "{}: {} tensors (EasyDeL {}) on mesh {} ({} devices); max {} {}per device (device {}){}{}\n",
      result.failed ? "FAILED" : "ok", WithThousands(result.tensors), result.easydel_version, result.mesh.ToString(),
      WithThousands(result.mesh.NumDevices()), HumanBytesBinary(result.summary.max),
      whole_memory.empty() ? "" : "of parameters ", result.summary.worst_device, whole_memory,
      result.budget ? " of " + result.budget_text + " budget" : "; memory not checked (no --max-memory or --hardware)");
  shown.out = std::move(text);
  return Status();
}

}  // namespace

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
      .document = ValidateDocument,
      .terminal = ShowValidated,
  };
}

}  // namespace easyplan::api
