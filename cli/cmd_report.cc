// `easyplan report CONFIG [plan options] [--mode M --batch B --seq S --hardware H] -o plan.html`: one
// self-contained HTML page of the plan, with a step its memory and with --hardware its cost per layer
// (docs/REPORT.md). Exit 1 when the plan has errors or the step does not fit; the page is written
// either way.
#include <memory>

#include "api/report.h"
#include "cli/commands.h"
#include "cli/pipeline_flags.h"

namespace easyplan::cli {
namespace {

struct ReportCommandFlags {
  api::ReportOptions report;
  api::MemoryOptions memory;
  std::string output;
};

StatusOr<int> RunReport(const ReportCommandFlags& flags, Context& ctx) {
  api::ReportOptions options = flags.report;
  api::SetReportStep(flags.memory, options);
  EP_RETURN_IF_ERROR(api::CheckPlanOptions(options.plan));
  EP_RETURN_IF_ERROR(api::CheckReportOptions(options));
  EP_ASSIGN_OR_RETURN(std::shared_ptr<const api::Model> model, LoadModel(ctx, options.plan.config));
  EP_ASSIGN_OR_RETURN(api::ReportResult result, api::Report(model, options));
  EP_ASSIGN_OR_RETURN(const std::string page, api::ReportPage(result.data, model->env().limits));
  EP_RETURN_IF_ERROR(WriteOutput(ctx, flags.output, page));
  return result.Failed() ? kExitFindings : kExitOk;
}

}  // namespace

std::function<int(Context&)> AddReportCommand(CLI::App& app) {
  auto flags = std::make_shared<ReportCommandFlags>();
  CLI::App* cmd = app.add_subcommand(
      "report", "one self-contained HTML page of the plan: mesh, memory, step time per layer, tensors, findings");
  AddPlanFlags(cmd, flags->report.plan);
  AddMemoryFlags(cmd, flags->memory, /*mode_defaults_to_train=*/false);
  AddStepPricingFlags(cmd, flags->report.microbatches, flags->report.decode, flags->report.precision);
  cmd->add_option("-o,--output", flags->output, "write the page to FILE (atomically) instead of stdout");
  return [flags](Context& ctx) {
    StatusOr<int> code = RunReport(*flags, ctx);
    return code.ok() ? *code : ReportError(ctx, code.status());
  };
}

}  // namespace easyplan::cli
