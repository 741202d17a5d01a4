// `easyplan report CONFIG [plan options] [--mode M --batch B --seq S --hardware H] -o plan.html`: one
// self-contained HTML page of the plan (api/report.h, docs/REPORT.md), written either way; exit 1 when
// the plan has errors or the step does not fit.
#include "cli/commands.h"

namespace easyplan::cli {

Status RenderReport(const api::CommandResult& result, const api::CommandOptions& options, Context& ctx) {
  return WriteOutput(ctx, options.output, std::get<api::ReportValue>(result.value).page);
}

}  // namespace easyplan::cli
