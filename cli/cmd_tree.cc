// `easyplan tree CONFIG`: the model's parameter tree (api/command_tree.cc) as a table, CSV or JSON, and
// the diff between template and checkpoint as text.
#include "cli/commands.h"
#include "cli/tree_format.h"
#include "core/emit.h"

namespace easyplan::cli {

Status RenderTree(const api::CommandResult& result, const api::CommandOptions& options, Context& ctx) {
  const api::TreeValue& value = std::get<api::TreeValue>(result.value);
  const std::string& format = options.format;
  if (value.diff) {
    return WriteOutput(ctx, options.output,
                       format == "json" ? EmitJson(api::DiffToJson(*value.diff)) : DiffToText(*value.diff));
  }
  const ParamTree& tree = *value.tree;
  if (format == "json")
    return WriteOutput(ctx, options.output, TreeToJsonText(tree, value.totals, value.easydel_version));
  if (format == "csv") return WriteOutput(ctx, options.output, TreeToCsv(tree, value.totals));
  return WriteOutput(ctx, options.output, TreeToTable(tree, value.totals));
}

}  // namespace easyplan::cli
