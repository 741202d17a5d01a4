// `easyplan resolve CONFIG`: the complete config EasyDeL would use, every default and derived field.
#include "api/commands.h"
#include "core/emit.h"

namespace easyplan::api {
namespace {

// JSON, or YAML for --format yaml.
Status ShowResolved(const CommandResult& result, const CommandOptions& options, TerminalOutput& shown) {
  const Json& document = std::get<Json>(result.value);
  shown.out = options.format == "yaml" ? EmitYaml(document) : EmitJson(document);
  return Status();
}

}  // namespace

CommandSpec ResolveCommand() {
  return {
      .name = "resolve",
      .summary = "print the complete config EasyDeL would use, with every default and derived field",
      .groups = {OptionGroup::kConfig},
      .options = {"provenance", "format", "output"},
      .run = [](const RunContext& context, const CheckedCommand& command) -> StatusOr<CommandResult> {
        return CommandResult{.value = ResolvedDocument(*context.model, command.options.provenance)};
      },
      .document = [](const CommandResult& result,
                     const CommandOptions&) { return EmitJson(std::get<Json>(result.value)); },
      .terminal = ShowResolved,
  };
}

}  // namespace easyplan::api
