// `easyplan activations CONFIG --mode decode`: the attention, residual-stream, KV-cache and expert-mesh
// shardings EasyDeL uses in one runtime mode (docs/ACTIVATIONS.md), with shapes and bytes per device
// when --batch and --seq are given.
#include <fmt/format.h>

#include <memory>

#include "api/activation_pipeline.h"
#include "api/findings_text.h"
#include "api/memory_pipeline.h"
#include "cli/activations_format.h"
#include "cli/commands.h"
#include "cli/plan_format.h"
#include "core/human.h"

namespace easyplan::cli {

Status RenderActivations(const api::CommandResult& run, const api::CommandOptions& options, Context& ctx) {
  const api::ActivationsResult& result = std::get<api::ActivationsResult>(run.value);
  ActivationsView view{&result.plan, result.model_type, result.mesh_source, result.easydel_version};
  const bool json = options.format == "json";
  if (!json) ctx.err << api::FindingsForTerminal(result.plan.findings, ctx.verbose);
  std::string text = json ? api::ActivationsToJsonText(view) : ActivationsToTable(view);
  const api::MemoryOptions& budget = options.memory;
  if (!json && (!budget.hardware.empty() || !budget.max_memory.empty()) && result.plan.cache_bytes_per_device > 0) {
    std::string label;
    EP_ASSIGN_OR_RETURN(const int64_t bytes, api::MemoryBudget(*run.model, budget, &label));
    text += fmt::format(
        "kv cache per device: {} of {}, {:.0f}% of it (`easyplan memory --mode serve` adds the "
        "weights and the working set)\n",
        HumanBytesBinary(result.plan.cache_bytes_per_device), label,
        100.0 * static_cast<double>(result.plan.cache_bytes_per_device) / static_cast<double>(bytes));
  }
  return WriteOutput(ctx, options.output, text);
}

}  // namespace easyplan::cli
