// `easyplan activations CONFIG --mode decode`: the attention, residual-stream, KV-cache and expert-mesh
// shardings EasyDeL uses in one runtime mode (docs/ACTIVATIONS.md), with shapes and bytes per device
// when --batch and --seq are given.
#include "api/activations_json.h"
#include "api/commands.h"

namespace easyplan::api {

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
      .document =
          [](const CommandResult& result, const CommandOptions&) {
            const ActivationsResult& value = std::get<ActivationsResult>(result.value);
            return ActivationsToJsonText({&value.plan, value.model_type, value.mesh_source, value.easydel_version});
          },
  };
}

}  // namespace easyplan::api
