// `easyplan export CONFIG --to FORMAT`: the plan in the form another runtime reads (docs/FORMATS.md).
// The pipeline is api/export.h and the artifacts planner/export.h; this file holds the flags and
// writes the output.
#include <memory>

#include "api/export.h"
#include "api/findings_text.h"
#include "cli/commands.h"
#include "cli/config_flags.h"
#include "cli/pipeline_flags.h"
#include "planner/export.h"

namespace easyplan::cli {
namespace {

struct ExportFlags {
  api::ExportOptions options;
  std::string output;
  const CLI::Option* layout_option = nullptr;  // to tell an explicit --layout from the default
};

StatusOr<int> RunExport(ExportFlags flags, Context& ctx) {
  api::ExportOptions& options = flags.options;
  options.layout_given = flags.layout_option != nullptr && flags.layout_option->count() > 0;
  EP_RETURN_IF_ERROR(api::CheckExportOptions(options));
  EP_RETURN_IF_ERROR(api::CheckPlanOptions(options.plan));
  EP_ASSIGN_OR_RETURN(std::shared_ptr<const api::Model> model, LoadModel(ctx, options.plan.config));
  EP_ASSIGN_OR_RETURN(api::ExportResult result, api::Export(model, options));
  ctx.err << api::FindingsForTerminal(result.findings, ctx.verbose);
  if (result.failed) return kExitFindings;
  EP_RETURN_IF_ERROR(WriteOutput(ctx, flags.output, result.text));
  return kExitOk;
}

}  // namespace

std::function<int(Context&)> AddExportCommand(CLI::App& app) {
  auto flags = std::make_shared<ExportFlags>();
  CLI::App* cmd = app.add_subcommand(
      "export", "write the plan for another runtime: jax, jax-json, xla-hlo, shardy, torch, hf-tp-plan, json");
  AddPlanFlags(cmd, flags->options.plan);
  flags->layout_option = cmd->get_option("--layout");
  cmd->add_option("--to", flags->options.to,
                  "jax (Python module), jax-json (MaxText golden-dump JSON), xla-hlo (HLO sharding per tensor), "
                  "shardy (sdy.mesh + #sdy.sharding), torch (DTensor placements and local shards), hf-tp-plan "
                  "(transformers tp_plan), json (the plan, as plan --format json)")
      ->required();
  cmd->add_option("--format", flags->options.format,
                  "text (default) or json: JSON instead of lines for xla-hlo and shardy");
  cmd->add_option("-o,--output", flags->output, "write to FILE (atomically) instead of stdout");
  return [flags](Context& ctx) {
    StatusOr<int> code = RunExport(*flags, ctx);
    return code.ok() ? *code : ReportError(ctx, code.status());
  };
}

}  // namespace easyplan::cli
