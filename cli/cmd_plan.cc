// `easyplan plan CONFIG`: which slice of which tensor each device holds, and the bytes per device.
#include <memory>

#include "api/assumptions.h"
#include "api/plan_pipeline.h"
#include "cli/commands.h"
#include "cli/pipeline_flags.h"
#include "cli/plan_format.h"

namespace easyplan::cli {
namespace {

struct PlanCommandFlags {
  api::PlanOptions plan;
  std::string format = "table";
  std::string output;
  std::optional<int64_t> rank;
  bool summary = false;
};

StatusOr<int> RunPlan(const PlanCommandFlags& flags, Context& ctx) {
  EP_RETURN_IF_ERROR(CheckChoice("--format", flags.format, {"table", "json"}));
  EP_RETURN_IF_ERROR(api::CheckPlanOptions(flags.plan));
  EP_ASSIGN_OR_RETURN(std::shared_ptr<const api::Model> model, LoadModel(ctx, flags.plan.config));
  const api::PlanViewOptions view{flags.rank, flags.summary};
  EP_ASSIGN_OR_RETURN(api::PlanResult result, api::PlanModel(model, flags.plan, view));
  // The figures whenever the plan can be laid out, as memory and cost print theirs: a plan with errors
  // adds its findings on stderr and exit 1 (a summary of what is wrong is still worth seeing).
  ctx.err << api::FindingsForTerminal(result.plan.findings, ctx.verbose);
  std::string text;
  if (flags.format == "json") {
    text = api::PlanResultToJsonText(result, view);
  } else {
    PlanView table{&result.plan, result.inputs.tree.get(), result.inputs.rules, flags.rank, flags.summary};
    table.weights = api::QuantizedWeights(*result.inputs.model, result.inputs.tree_spec);
    if (result.experts) {
      table.expert_mesh = &result.experts->mesh;
      table.expert_specs = &result.experts->specs;
    }
    text = PlanToTable(table);
  }
  EP_RETURN_IF_ERROR(WriteOutput(ctx, flags.output, text));
  return result.plan.HasErrors() ? kExitFindings : kExitOk;
}

}  // namespace

std::function<int(Context&)> AddPlanCommand(CLI::App& app) {
  auto flags = std::make_shared<PlanCommandFlags>();
  CLI::App* cmd =
      app.add_subcommand("plan", "lay the partition rules on the mesh: the shards and bytes of every device");
  AddPlanFlags(cmd, flags->plan);
  cmd->add_option("--format", flags->format, "table (default) or json");
  cmd->add_option("-o,--output", flags->output, "write to FILE (atomically) instead of stdout");
  cmd->add_option("--rank", flags->rank, "also show the slice and replica id device K holds of every tensor");
  AddRenamedFlag(cmd, "--device", "--rank K (the device whose view is shown; the accelerator is --hardware)");
  cmd->add_flag("--summary", flags->summary, "only the mesh and per-device summary, not one row per tensor");
  return [flags](Context& ctx) {
    StatusOr<int> code = RunPlan(*flags, ctx);
    return code.ok() ? *code : ReportError(ctx, code.status());
  };
}

}  // namespace easyplan::cli
