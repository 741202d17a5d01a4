// `easyplan activations CONFIG --mode decode`: the attention, residual-stream, KV-cache and expert-mesh
// shardings EasyDeL uses in one runtime mode (docs/ACTIVATIONS.md), with shapes and bytes per device
// when --batch and --seq are given.
#include <fmt/format.h>

#include "api/activations_json.h"
#include "api/activations_text.h"
#include "api/commands.h"
#include "api/findings_text.h"
#include "api/memory_pipeline.h"
#include "core/human.h"

namespace easyplan::api {

namespace {

ActivationsView ViewOf(const ActivationsResult& result) {
  return {&result.plan, result.model_type, result.mesh_source, result.easydel_version};
}

std::string ActivationsDocument(const CommandResult& result, const CommandOptions&) {
  return ActivationsToJsonText(ViewOf(std::get<ActivationsResult>(result.value)));
}

// The table with the findings on stderr (or the JSON, which holds them), and with a memory budget the
// KV cache's share of it.
Status ShowActivations(const CommandResult& run, const CommandOptions& options, TerminalOutput& shown) {
  const ActivationsResult& result = std::get<ActivationsResult>(run.value);
  if (options.format == "json") {
    shown.out = ActivationsDocument(run, options);
    return Status();
  }
  shown.err = FindingsForTerminal(result.plan.findings, options.verbose);
  std::string text = ActivationsToTable(ViewOf(result));
  const MemoryOptions& budget = options.memory;
  if ((!budget.hardware.empty() || !budget.max_memory.empty()) && result.plan.cache_bytes_per_device > 0) {
    std::string label;
    EP_ASSIGN_OR_RETURN(const int64_t bytes, MemoryBudget(*run.model, budget, &label));
    text += fmt::format(
        "kv cache per device: {} of {}, {:.0f}% of it (`easyplan memory --mode serve` adds the "
        "weights and the working set)\n",
        HumanBytesBinary(result.plan.cache_bytes_per_device), label,
        100.0 * static_cast<double>(result.plan.cache_bytes_per_device) / static_cast<double>(bytes));
  }
  shown.out = std::move(text);
  return Status();
}

}  // namespace

CommandSpec ActivationsCommand() {
  return {
      .name = "activations",
      .summary = "the attention, hidden-state, KV-cache and expert-mesh shardings of a runtime mode",
      .groups = {OptionGroup::kConfig, OptionGroup::kMesh, OptionGroup::kStep, OptionGroup::kHardware},
      .options = {"attention_layout", "qkv_mni", "softmax_aux_ndim", "activation_dtype", "kernel", "cache", "page_size",
                  "num_pages", "cache_version", "format", "output"},
      .check = [](const CommandOptions& options) { return CheckedPipeline(options.Activations()); },
      .run = [](const RunContext& context, const CheckedCommand& command) -> StatusOr<CommandResult> {
        EP_ASSIGN_OR_RETURN(const Checked<ActivationOptions>* checked, command.Pipeline<ActivationOptions>());
        EP_ASSIGN_OR_RETURN(ActivationsResult result, Activations(context.model, command.options.plan.mesh, *checked));
        const Outcome outcome = result.Failed() ? Outcome::kFindings : Outcome::kOk;
        return CommandResult{.outcome = outcome, .value = std::move(result)};
      },
      .document = ActivationsDocument,
      .terminal = ShowActivations,
  };
}

}  // namespace easyplan::api
