// `easyplan resolve CONFIG`: the config compiler's front end, as JSON or YAML.
#include "cli/commands.h"
#include "core/emit.h"

namespace easyplan::cli {

Status RenderResolve(const api::CommandResult& result, const api::CommandOptions& options, Context& ctx) {
  const Json& document = std::get<Json>(result.value);
  return WriteOutput(ctx, options.output, options.format == "yaml" ? EmitYaml(document) : EmitJson(document));
}

}  // namespace easyplan::cli
