// `easyplan report CONFIG [plan options] [--mode M --batch B --seq S --hardware H] -o plan.html`: one
// self-contained HTML page of the plan (docs/REPORT.md). Exit 1 when the plan has errors or the step
// does not fit; the page is written either way.
#include <memory>

#include "api/memory_pipeline.h"
#include "api/report.h"
#include "cli/commands.h"
#include "cli/pipeline_flags.h"

namespace easyplan::cli {
namespace {

struct ReportCommandFlags {
  api::PlanOptions plan;
  api::MemoryOptions memory;
  std::string output;
};

StatusOr<int> RunReport(const ReportCommandFlags& flags, Context& ctx) {
  EP_RETURN_IF_ERROR(api::CheckPlanOptions(flags.plan));
  api::ReportOptions options;
  options.plan = flags.plan;
  if (!flags.memory.mode.empty()) {
    EP_RETURN_IF_ERROR(api::CheckMemoryOptions(flags.memory));
    options.memory = flags.memory;
  }
  EP_ASSIGN_OR_RETURN(std::shared_ptr<const api::Model> model, LoadModel(ctx, flags.plan.config));
  EP_ASSIGN_OR_RETURN(Json data, api::ReportData(model, options));
  EP_RETURN_IF_ERROR(WriteOutput(ctx, flags.output, api::ReportPage(data)));
  const bool errors = data["verdict"]["errors"].get<int64_t>() > 0;
  const bool over = data["verdict"]["fits"].is_boolean() && !data["verdict"]["fits"].get<bool>();
  return errors || over ? kExitFindings : kExitOk;
}

}  // namespace

std::function<int(Context&)> AddReportCommand(CLI::App& app) {
  auto flags = std::make_shared<ReportCommandFlags>();
  CLI::App* cmd = app.add_subcommand(
      "report", "one self-contained HTML page of the plan: mesh, memory per device, tensors, findings");
  AddPlanFlags(cmd, flags->plan);
  AddMemoryFlags(cmd, flags->memory, /*mode_flag=*/true);
  cmd->add_option("-o,--output", flags->output, "write the page to FILE (atomically) instead of stdout");
  return [flags](Context& ctx) {
    StatusOr<int> code = RunReport(*flags, ctx);
    return code.ok() ? *code : ReportError(ctx, code.status());
  };
}

}  // namespace easyplan::cli
