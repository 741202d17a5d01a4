#include "cli/commands.h"

namespace easyplan::cli {

const std::vector<Command>& AllCommands() {
  static const std::vector<Command> kCommands = {
      {"resolve", "print the complete config EasyDeL would use, with every default and derived field",
       AddResolveCommand},
      {"tree", "list every tensor of the model: name, shape, dtype, size", AddTreeCommand},
      {"plan", "lay the partition rules on the mesh: the shards and bytes of every device", AddPlanCommand},
      {"explain", "show how the rules and the mesh decide the sharding of matching tensors", AddExplainCommand},
      {"validate", "check a plan for CI: unmatched tensors, bad axes, indivisible dims, dead rules, memory",
       AddValidateCommand},
      {"activations", "the attention, hidden-state, KV-cache and expert-mesh shardings of a runtime mode",
       AddActivationsCommand},
      {"memory", "will it fit: parameters, gradients, optimizer state, activations, KV cache per device",
       AddMemoryCommand},
      {"export", "write the plan for another runtime: jax, jax-json, xla-hlo, shardy, torch, hf-tp-plan, json",
       AddExportCommand},
      {"check", "execute the plan on simulated devices: layout tiling and a sharded-vs-unsharded forward pass",
       AddCheckCommand},
      {"cost", "estimated step time on an accelerator: compute, communication, overlap, tokens/s, MFU, memory",
       AddCostCommand},
      {"suggest", "search every mesh, checkpoint policy and microbatch count; rank what fits by step time",
       AddSuggestCommand},
      {"report", "one self-contained HTML page of the plan: mesh, memory per device, tensors, findings",
       AddReportCommand},
  };
  return kCommands;
}

}  // namespace easyplan::cli
