// `easyplan export CONFIG --to FORMAT`: the plan in the form another runtime reads (docs/FORMATS.md).
// The artifacts are built in planner/export.h; this file holds the flags and writes the output.
#include <memory>
#include <optional>

#include "cli/activation_setup.h"
#include "cli/commands.h"
#include "cli/plan_format.h"
#include "cli/plan_setup.h"
#include "planner/export.h"

namespace easyplan::cli {
namespace {

struct ExportFlags {
  PlanFlags plan;
  std::string to;
  std::string format = "text";
  std::string output;
  const CLI::Option* layout_option = nullptr;  // to tell an explicit --layout from the default
};

StatusOr<int> RunExport(ExportFlags flags, Context& ctx) {
  EP_ASSIGN_OR_RETURN(const planner::ExportFormatInfo* to, planner::FindExportFormat(flags.to));
  EP_RETURN_IF_ERROR(CheckChoice("--format", flags.format, {"text", "json"}));
  const planner::ExportOptions options{.json = flags.format == "json"};
  EP_RETURN_IF_ERROR(planner::CheckExportOptions(*to, options));
  // DTensor placements and tp_plans are about HF (torch) tensors: plan the HF names unless told otherwise.
  const bool layout_given = flags.layout_option != nullptr && flags.layout_option->count() > 0;
  if (to->hf_names && !layout_given && flags.plan.tree.empty()) flags.plan.layout = "hf";

  EP_ASSIGN_OR_RETURN(std::unique_ptr<PlanInputs> inputs, LoadPlanInputs(ctx, flags.plan));
  EP_RETURN_IF_ERROR(planner::CheckExportTree(*to, inputs->tree));
  EP_ASSIGN_OR_RETURN(planner::Plan plan, planner::BuildPlan(inputs->Request()));
  if (plan.HasErrors()) {
    ctx.err << FindingsToText(plan.findings);
    return kExitFindings;
  }
  if (!plan.findings.empty()) ctx.err << FindingsToText(plan.findings);

  std::unique_ptr<planner::ActivationTable> table;
  if (to->needs_activation_table) {
    EP_ASSIGN_OR_RETURN(table, LoadActivationTable(ctx, flags.plan.config.schemas_dir));
  }
  planner::ExportInputs export_inputs{.plan = &plan,
                                      .tree = &inputs->tree,
                                      .rules = inputs->rules,
                                      .presets = inputs->presets,
                                      .config = &inputs->resolved.config,
                                      .activation_table = table.get()};
  export_inputs.plan_json = [&]() -> StatusOr<std::string> {
    EP_ASSIGN_OR_RETURN(std::optional<ExpertReport> experts,
                        ExpertReportForPlan(ctx, *inputs, flags.plan.config.schemas_dir));
    PlanView view{&plan, &inputs->tree, inputs->rules, std::nullopt, false};
    if (experts) {
      view.expert_mesh = &experts->mesh;
      view.expert_specs = &experts->specs;
    }
    return PlanToJsonText(view);
  };
  EP_ASSIGN_OR_RETURN(std::string text, planner::ExportPlan(to->name, export_inputs, options));
  EP_RETURN_IF_ERROR(WriteOutput(ctx, flags.output, text));
  return kExitOk;
}

}  // namespace

std::function<int(Context&)> AddExportCommand(CLI::App& app) {
  auto flags = std::make_shared<ExportFlags>();
  CLI::App* cmd = app.add_subcommand(
      "export", "write the plan for another runtime: jax, jax-json, xla-hlo, shardy, torch, hf-tp-plan, json");
  AddPlanFlags(cmd, flags->plan);
  flags->layout_option = cmd->get_option("--layout");
  cmd->add_option("--to", flags->to,
                  "jax (Python module), jax-json (MaxText golden-dump JSON), xla-hlo (HLO sharding per tensor), "
                  "shardy (sdy.mesh + #sdy.sharding), torch (DTensor placements and local shards), hf-tp-plan "
                  "(transformers tp_plan), json (the plan, as plan --format json)")
      ->required();
  cmd->add_option("--format", flags->format, "text (default) or json: JSON instead of lines for xla-hlo and shardy");
  cmd->add_option("-o,--output", flags->output, "write to FILE (atomically) instead of stdout");
  return [flags](Context& ctx) {
    StatusOr<int> code = RunExport(*flags, ctx);
    return code.ok() ? *code : ReportError(ctx, code.status());
  };
}

}  // namespace easyplan::cli
