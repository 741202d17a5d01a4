// `easyplan export CONFIG --to FORMAT`: the plan in the form another runtime reads (docs/FORMATS.md).
// The pipeline is api/export.h and the artifacts planner/export.h; this file writes the output.
#include "api/findings_text.h"
#include "cli/commands.h"

namespace easyplan::cli {

Status RenderExport(const api::CommandResult& result, const api::CommandOptions& options, Context& ctx) {
  const api::ExportResult& exported = std::get<api::ExportResult>(result.value);
  ctx.err << api::FindingsForTerminal(exported.findings, ctx.verbose);
  if (exported.failed) return Status();  // no artifact; the outcome is exit 1
  return WriteOutput(ctx, options.output, exported.text);
}

}  // namespace easyplan::cli
