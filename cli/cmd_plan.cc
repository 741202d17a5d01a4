// `easyplan plan CONFIG`: which slice of which tensor each device holds, and the bytes per device.
#include <memory>

#include "api/activation_pipeline.h"
#include "cli/commands.h"
#include "cli/pipeline_flags.h"
#include "cli/plan_format.h"

namespace easyplan::cli {
namespace {

struct PlanCommandFlags {
  api::PlanOptions plan;
  std::string format = "table";
  std::string output;
  std::optional<int64_t> device;
  bool summary = false;
};

StatusOr<int> RunPlan(const PlanCommandFlags& flags, Context& ctx) {
  EP_RETURN_IF_ERROR(CheckChoice("--format", flags.format, {"table", "json"}));
  EP_ASSIGN_OR_RETURN(api::PlanInputs inputs, LoadPlanInputs(ctx, flags.plan));
  if (flags.device && (*flags.device < 0 || *flags.device >= inputs.mesh.NumDevices())) {
    return Status::BadInput({}, "--device " + std::to_string(*flags.device) +
                                    " is not a device of the mesh: ids are 0.." +
                                    std::to_string(inputs.mesh.NumDevices() - 1) + " (" + inputs.mesh.ToString() + ")");
  }
  planner::PlanRequest request = inputs.Request();
  request.keep_params = !flags.summary;  // the summary shows no per-tensor rows
  EP_ASSIGN_OR_RETURN(planner::Plan plan, planner::BuildPlan(request));
  if (plan.HasErrors()) {
    // Like a compiler: no artifact when the plan is wrong; the findings say what to fix.
    ctx.err << FindingsToText(plan.findings);
    return kExitFindings;
  }
  if (!plan.findings.empty()) ctx.err << FindingsToText(plan.findings);
  EP_ASSIGN_OR_RETURN(std::optional<api::ExpertReport> experts, api::ExpertReportForPlan(inputs));
  PlanView view{&plan, inputs.tree.get(), inputs.rules, flags.device, flags.summary};
  if (experts) {
    view.expert_mesh = &experts->mesh;
    view.expert_specs = &experts->specs;
  }
  const std::string text = flags.format == "json" ? api::PlanToJsonText(view) : PlanToTable(view);
  EP_RETURN_IF_ERROR(WriteOutput(ctx, flags.output, text));
  return kExitOk;
}

}  // namespace

std::function<int(Context&)> AddPlanCommand(CLI::App& app) {
  auto flags = std::make_shared<PlanCommandFlags>();
  CLI::App* cmd =
      app.add_subcommand("plan", "lay the partition rules on the mesh: the shards and bytes of every device");
  AddPlanFlags(cmd, flags->plan);
  cmd->add_option("--format", flags->format, "table (default) or json");
  cmd->add_option("-o,--output", flags->output, "write to FILE (atomically) instead of stdout");
  cmd->add_option("--device", flags->device, "also show the slice and replica id device K holds of every tensor");
  cmd->add_flag("--summary", flags->summary, "only the mesh and per-device summary, not one row per tensor");
  return [flags](Context& ctx) {
    StatusOr<int> code = RunPlan(*flags, ctx);
    return code.ok() ? *code : ReportError(ctx, code.status());
  };
}

}  // namespace easyplan::cli
