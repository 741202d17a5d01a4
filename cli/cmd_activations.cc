// `easyplan activations CONFIG --mode decode`: the attention, residual-stream, KV-cache and expert-mesh
// shardings EasyDeL uses in one runtime mode (docs/ACTIVATIONS.md), with shapes and bytes per device
// when --batch and --seq are given.
#include <fmt/format.h>

#include <memory>

#include "api/activation_pipeline.h"
#include "api/memory_pipeline.h"
#include "cli/activations_format.h"
#include "cli/commands.h"
#include "cli/config_flags.h"
#include "cli/pipeline_flags.h"
#include "cli/plan_format.h"
#include "core/human.h"

namespace easyplan::cli {
namespace {

struct ActivationsCommandFlags {
  api::ConfigOptions config;
  api::MeshOptions mesh;
  api::ActivationOptions activations;
  std::string format = "table";
  std::string output;
  api::MemoryOptions budget;  ///< --hardware / --max-memory: the KV cache against the device's memory
};

StatusOr<int> RunActivations(const ActivationsCommandFlags& flags, Context& ctx) {
  EP_RETURN_IF_ERROR(CheckChoice("--format", flags.format, {"table", "json"}));
  EP_RETURN_IF_ERROR(api::CheckActivationOptions(flags.activations));
  if (flags.mesh.max_devices < 1) return Status::BadInput({}, "--max-devices must be at least 1");
  EP_ASSIGN_OR_RETURN(std::shared_ptr<const api::Model> model, LoadModel(ctx, flags.config));
  EP_ASSIGN_OR_RETURN(api::ActivationsResult result, api::Activations(model, flags.mesh, flags.activations));
  ActivationsView view{&result.plan, result.model_type, result.mesh_source};
  if (flags.format != "json") ctx.err << api::FindingsForTerminal(result.plan.findings, ctx.verbose);
  std::string text = flags.format == "json" ? api::ActivationsToJsonText(view) : ActivationsToTable(view);
  if (flags.format != "json" && (!flags.budget.hardware.empty() || !flags.budget.max_memory.empty()) &&
      result.plan.cache_bytes_per_device > 0) {
    std::string label;
    EP_ASSIGN_OR_RETURN(const int64_t budget, api::MemoryBudget(*model, flags.budget, &label));
    text += fmt::format(
        "kv cache per device: {} of {}, {:.0f}% of it (`easyplan memory --mode serve` adds the "
        "weights and the working set)\n",
        HumanBytesBinary(result.plan.cache_bytes_per_device), label,
        100.0 * static_cast<double>(result.plan.cache_bytes_per_device) / static_cast<double>(budget));
  }
  EP_RETURN_IF_ERROR(WriteOutput(ctx, flags.output, text));
  return result.Failed() ? kExitFindings : kExitOk;
}

}  // namespace

std::function<int(Context&)> AddActivationsCommand(CLI::App& app) {
  auto flags = std::make_shared<ActivationsCommandFlags>();
  CLI::App* cmd = app.add_subcommand(
      "activations", "the attention, hidden-state, KV-cache and expert-mesh shardings of a runtime mode");
  AddConfigFlags(cmd, flags->config);
  cmd->add_option("--mesh", flags->mesh.mesh,
                  "mesh axes in mesh order, e.g. dp=1,fsdp=-1,ep=1,tp=8,sp=1 (default: the config's "
                  "sharding_axis_dims / sharding_axis_names)");
  cmd->add_option("--dcn", flags->mesh.dcn, "multi-slice factors, e.g. dp=2: axis sizes become ICI x DCN, DCN major");
  cmd->add_option("--max-devices", flags->mesh.max_devices,
                  "refuse meshes with more devices than this (default 4194304)");
  AddActivationFlags(cmd, flags->activations, /*full=*/true);
  cmd->add_option("--max-memory", flags->budget.max_memory,
                  "the memory of one device, e.g. 80GiB: the KV cache is shown against it (default: the --hardware's)");
  AddHardwareFlag(cmd, flags->budget.hardware);
  cmd->add_option("--format", flags->format, "table (default) or json");
  cmd->add_option("-o,--output", flags->output, "write to FILE (atomically) instead of stdout");
  return [flags](Context& ctx) {
    StatusOr<int> code = RunActivations(*flags, ctx);
    return code.ok() ? *code : ReportError(ctx, code.status());
  };
}

}  // namespace easyplan::cli
