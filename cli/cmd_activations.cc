// `easyplan activations CONFIG --mode decode`: the attention, residual-stream, KV-cache and expert-mesh
// shardings EasyDeL uses in one runtime mode (docs/ACTIVATIONS.md), with shapes and bytes per device
// when --batch and --seq are given.
#include <memory>

#include "cli/activation_setup.h"
#include "cli/activations_format.h"
#include "cli/commands.h"
#include "cli/config_flags.h"
#include "cli/plan_format.h"
#include "cli/plan_setup.h"
#include "rules/rule_library.h"
#include "schemas/data_source.h"

namespace easyplan::cli {
namespace {

struct ActivationsCommandFlags {
  ConfigFlags config;
  MeshFlags mesh;
  ActivationFlags activations;
  std::string format = "table";
  std::string output;
};

StatusOr<int> RunActivations(const ActivationsCommandFlags& flags, Context& ctx) {
  EP_RETURN_IF_ERROR(CheckChoice("--format", flags.format, {"table", "json"}));
  EP_RETURN_IF_ERROR(CheckActivationFlags(flags.activations));
  if (flags.mesh.max_devices < 1) return Status::BadInput({}, "--max-devices must be at least 1");

  schemas::SchemaSet schemas = MakeSchemaSet(ctx, flags.config);
  EP_ASSIGN_OR_RETURN(schemas::ResolvedConfig resolved, ResolveFromFlags(ctx, flags.config, schemas));
  const std::string dir = flags.config.schemas_dir.empty() ? ctx.schemas_dir : flags.config.schemas_dir;
  rules::RuleLibrary library(dir.empty() ? schemas::DataSource::Embedded()
                                         : schemas::DataSource::Directory(dir, ctx.fs));
  EP_ASSIGN_OR_RETURN(const rules::Presets* presets, library.GetPresets());
  EP_ASSIGN_OR_RETURN(std::unique_ptr<planner::ActivationTable> table, LoadActivationTable(ctx, dir));
  MeshFlags mesh_flags = flags.mesh;
  mesh_flags.devices = flags.config.devices;
  std::string mesh_source;
  EP_ASSIGN_OR_RETURN(Mesh mesh, MeshFromFlags(mesh_flags, resolved.config, true, &mesh_source));
  EP_ASSIGN_OR_RETURN(planner::ActivationPlan plan,
                      BuildActivationsFromFlags(flags.activations, *table, *presets, resolved.config, mesh));

  ActivationsView view{&plan, resolved.config.value("model_type", std::string()), mesh_source};
  if (flags.format != "json" && !plan.findings.empty()) ctx.err << FindingsToText(plan.findings);
  const std::string text = flags.format == "json" ? ActivationsToJsonText(view) : ActivationsToTable(view);
  EP_RETURN_IF_ERROR(WriteOutput(ctx, flags.output, text));
  int errors = 0, warnings = 0;
  for (const planner::Finding& finding : plan.findings) {
    errors += finding.severity == Severity::kError;
    warnings += finding.severity == Severity::kWarning;
  }
  return errors > 0 || (flags.config.strict && warnings > 0) ? kExitFindings : kExitOk;
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
  cmd->add_option("--format", flags->format, "table (default) or json");
  cmd->add_option("-o,--output", flags->output, "write to FILE (atomically) instead of stdout");
  return [flags](Context& ctx) {
    StatusOr<int> code = RunActivations(*flags, ctx);
    return code.ok() ? *code : ReportError(ctx, code.status());
  };
}

}  // namespace easyplan::cli
