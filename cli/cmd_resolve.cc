// `easyplan resolve CONFIG`: the config compiler's front end.
#include <memory>
#include <optional>

#include "api/model.h"
#include "cli/commands.h"
#include "cli/config_flags.h"
#include "core/emit.h"

namespace easyplan::cli {
namespace {

struct ResolveFlags {
  api::ConfigOptions config;
  std::string format = "json";
  std::string output;
  bool provenance = false;
};

StatusOr<int> RunResolve(const ResolveFlags& flags, Context& ctx) {
  EP_RETURN_IF_ERROR(CheckChoice("--format", flags.format, {"json", "yaml"}));
  EP_ASSIGN_OR_RETURN(std::shared_ptr<const api::Model> model, LoadModel(ctx, flags.config));
  const Json document = api::ResolvedDocument(*model, flags.provenance);
  EP_RETURN_IF_ERROR(WriteOutput(ctx, flags.output, flags.format == "yaml" ? EmitYaml(document) : EmitJson(document)));
  return kExitOk;
}

}  // namespace

std::function<int(Context&)> AddResolveCommand(CLI::App& app) {
  auto flags = std::make_shared<ResolveFlags>();
  CLI::App* cmd = app.add_subcommand("resolve",
                                     "print the complete config EasyDeL would use, with every default "
                                     "and derived field");
  AddConfigFlags(cmd, flags->config);
  cmd->add_option("--format", flags->format, "output format: json or yaml (default json)");
  cmd->add_option("-o,--output", flags->output, "write to FILE (atomically) instead of stdout");
  cmd->add_flag("--provenance", flags->provenance,
                "wrap the output as {config, provenance}: where each top-level value came from");
  return [flags](Context& ctx) {
    StatusOr<int> code = RunResolve(*flags, ctx);
    return code.ok() ? *code : ReportError(ctx, code.status());
  };
}

}  // namespace easyplan::cli
