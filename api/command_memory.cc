// `easyplan memory CONFIG --mode train|prefill|decode --batch B --seq S`: the bytes every device
// holds and whether it fits (docs/MEMORY.md); exit 1 when it does not.
#include "api/commands.h"
#include "api/findings_text.h"
#include "api/memory_json.h"
#include "api/memory_text.h"

namespace easyplan::api {
namespace {

// The step of `memory`: --batch sequences of --seq tokens in --microbatches parts.
MemoryOptions StepOf(const CommandOptions& options) {
  MemoryOptions step = options.memory;
  step.microbatches = options.pricing.microbatches;
  return step;
}

std::string MemoryDocument(const CommandResult& result, const CommandOptions&) {
  const MemoryResult& value = std::get<MemoryResult>(result.value);
  return MemoryToJsonText(*value.report, value.hardware, &value.plan.findings,
                          value.inputs.model->easydel_version().name);
}

// The figures whenever the plan can be laid out; a plan with errors adds its findings. Without --mode the
// step is a training step, and the table says so.
Status ShowMemory(const CommandResult& run, const CommandOptions& options, TerminalOutput& shown) {
  const MemoryResult& result = std::get<MemoryResult>(run.value);
  if (result.plan.HasErrors()) shown.err = FindingsForTerminal(result.plan.findings, options.verbose);
  shown.out = options.format == "json" ? MemoryDocument(run, options)
                                       : MemoryTable(*result.report, result.inputs, options.memory, result.budget_label,
                                                     options.Given("mode"));
  return Status();
}

}  // namespace

CommandSpec MemoryCommand() {
  return {
      .name = "memory",
      .summary = "will it fit: parameters, gradients, optimizer state, activations, KV cache per device",
      .groups = {OptionGroup::kConfig, OptionGroup::kTree, OptionGroup::kRules, OptionGroup::kMesh,
                 OptionGroup::kPipeline, OptionGroup::kStep, OptionGroup::kStepState, OptionGroup::kHardware},
      .options = {"microbatches", "format", "output"},
      .check =
          [](const CommandOptions& options) {
            return CheckedPipeline(MemoryRequest{.plan = options.plan, .step = StepOf(options)});
          },
      .run = [](const RunContext& context, const CheckedCommand& command) -> StatusOr<CommandResult> {
        EP_ASSIGN_OR_RETURN(const Checked<MemoryRequest>* checked, command.Pipeline<MemoryRequest>());
        EP_ASSIGN_OR_RETURN(MemoryResult result, Memory(context.model, *checked));
        // The figures whenever the plan can be laid out; a plan with errors adds its findings.
        const bool failed = !result.report->fits || result.plan.HasErrors();
        return CommandResult{.outcome = failed ? Outcome::kFindings : Outcome::kOk, .value = std::move(result)};
      },
      .document = MemoryDocument,
      .terminal = ShowMemory,
  };
}

}  // namespace easyplan::api
