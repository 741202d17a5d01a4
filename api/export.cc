#include "api/export.h"

#include "api/choices.h"
#include "api/option_checks.h"
#include "api/plan_inputs.h"
#include "api/plan_pipeline.h"
#include "planner/export.h"
#include "planner/export_dtensor.h"

namespace easyplan::api {
namespace {

struct Format {
  const planner::ExportFormatInfo* info = nullptr;
  planner::ExportOptions options;
};

StatusOr<Format> FormatOf(const ExportOptions& options) {
  Format format;
  EP_ASSIGN_OR_RETURN(format.info, planner::FindExportFormat(options.to));
  EP_RETURN_IF_ERROR(CheckOptionValue("export_format", Json(options.format)));
  format.options.json = options.format == "json";
  EP_RETURN_IF_ERROR(planner::CheckExportOptions(*format.info, format.options));
  return format;
}

}  // namespace

Status CheckExportOptions(const ExportOptions& options) { return FormatOf(options).status(); }

StatusOr<ExportResult> Export(const std::shared_ptr<const Model>& model, ExportOptions options) {
  EP_ASSIGN_OR_RETURN(const Format format, FormatOf(options));
  // DTensor placements and tp_plans are about HF (torch) tensors: plan the HF names unless told otherwise.
  if (format.info->hf_names && !options.layout_given && options.plan.tree.file.empty() && !options.plan.tree.given) {
    options.plan.tree.layout = "hf";
  }
  EP_ASSIGN_OR_RETURN(PlanInputs inputs, PreparePlan(model, options.plan));
  EP_RETURN_IF_ERROR(planner::CheckExportTree(*format.info, *inputs.tree));
  ExportResult result;
  EP_ASSIGN_OR_RETURN(planner::Plan plan, inputs.Build());
  result.findings = plan.findings;
  if (plan.HasErrors()) {
    result.failed = true;
    return result;
  }
  const Limits& limits = model->env().limits;
  const std::string what = "the " + std::string(format.info->name) + " export";
  if (format.info->format == planner::ExportFormat::kTorch) {
    // Devices x tensors: refused before anything is built.
    EP_RETURN_IF_ERROR(
        CheckOutputSize(what, planner::TorchExportSizeEstimate(plan, *inputs.tree), /*estimated=*/true, limits));
  }
  const planner::ActivationTable* table = nullptr;
  if (format.info->needs_activation_table) {
    EP_ASSIGN_OR_RETURN(table, model->ActivationTable());
  }
  PlanResult planned{std::move(inputs), std::move(plan), std::nullopt};
  planner::ExportInputs export_inputs{.plan = &planned.plan,
                                      .tree = planned.inputs.tree.get(),
                                      .rules = planned.inputs.rules,
                                      .presets = planned.inputs.presets,
                                      .config = &model->config(),
                                      .geometry = &model->resolved().geometry,
                                      .activation_table = table};
  export_inputs.plan_json = [&]() -> StatusOr<std::string> {
    EP_ASSIGN_OR_RETURN(planned.experts, ExpertReportForPlan(planned.inputs));
    return PlanResultToJsonText(planned);
  };
  EP_ASSIGN_OR_RETURN(result.text, planner::ExportPlan(format.info->name, export_inputs, format.options));
  EP_RETURN_IF_ERROR(CheckOutputSize(what, result.text.size(), /*estimated=*/false, limits));
  return result;
}

}  // namespace easyplan::api
