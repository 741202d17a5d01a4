// `easyplan tree CONFIG`: the model's parameter tree from its family template, a checkpoint's metadata
// (--from) or the user's own dump (--tree), and the diff between template and checkpoint (--diff).
#include "api/commands.h"
#include "api/tree_document.h"
#include "api/tree_text.h"
#include "core/emit.h"

namespace easyplan::api {
namespace {

StatusOr<CommandResult> RunTree(const RunContext& context, const CheckedCommand& command) {
  const CommandOptions& options = command.options;
  const std::shared_ptr<const Model>& model = context.model;
  const TreeOptions& t = options.plan.tree;
  TreeSpec spec;
  spec.layout = *ParseLayout(t.layout);
  spec.include_buffers = t.include_buffers;
  spec.max_tensors = t.max_tensors;
  if (!t.dtype.empty()) spec.dtype = ParseDType(t.dtype);
  TreeValue value;
  if (options.diff) {
    if (t.checkpoint.empty() || !model->has_config()) {
      return Status::BadInput({}, "--diff compares a config's template with a checkpoint: give CONFIG and --from PATH");
    }
    spec.layout = Layout::kHf;
    spec.include_buffers = true;
    EP_ASSIGN_OR_RETURN(value.tree, model->Tree(spec));
    EP_ASSIGN_OR_RETURN(value.diff, DiffWithCheckpoint(model->env(), *value.tree, t.checkpoint));
    const Outcome outcome = value.diff->Clean() ? Outcome::kOk : Outcome::kFindings;
    return CommandResult{.outcome = outcome, .value = std::move(value)};
  }
  if (t.given) {
    spec.source = TreeSpec::Source::kGiven;
    spec.given = t.given;
  } else if (!t.file.empty()) {
    spec.source = TreeSpec::Source::kFile;
    spec.path = t.file;
  } else if (!t.checkpoint.empty()) {
    EP_RETURN_IF_ERROR(CheckCheckpointSource(model->env(), t.checkpoint, spec.layout));
    spec.source = TreeSpec::Source::kCheckpoint;
    spec.path = t.checkpoint;
  } else if (!model->has_config()) {
    return Status::BadInput({}, "CONFIG is required (or --tree FILE.json, or --from CHECKPOINT)");
  }
  EP_ASSIGN_OR_RETURN(value.tree, model->Tree(spec));
  EP_ASSIGN_OR_RETURN(value.totals, value.tree->Totals());
  if (spec.source == TreeSpec::Source::kTemplate) value.easydel_version = model->easydel_version().name;
  return CommandResult{.value = std::move(value)};
}

std::string TreeDocument(const CommandResult& result, const CommandOptions&) {
  const TreeValue& value = std::get<TreeValue>(result.value);
  return value.diff ? EmitJson(DiffToJson(*value.diff))
                    : TreeToJsonText(*value.tree, value.totals, value.easydel_version);
}

// The tree as a table, CSV or JSON; the diff as text or JSON.
Status ShowTree(const CommandResult& result, const CommandOptions& options, TerminalOutput& shown) {
  const TreeValue& value = std::get<TreeValue>(result.value);
  if (options.format == "json") {
    shown.out = TreeDocument(result, options);
  } else if (value.diff) {
    shown.out = DiffToText(*value.diff);
  } else if (options.format == "csv") {
    shown.out = TreeToCsv(*value.tree, value.totals);
  } else {
    shown.out = TreeToTable(*value.tree, value.totals);
  }
  return Status();
}

}  // namespace

CommandSpec TreeCommand() {
  return {
      .name = "tree",
      .summary = "list every tensor of the model: name, shape, dtype, size",
      .groups = {OptionGroup::kConfig, OptionGroup::kTree},
      .options = {"include_buffers", "diff", "format", "output"},
      .check = [](const CommandOptions& options) -> StatusOr<std::any> {
        EP_RETURN_IF_ERROR(CheckTreeSources(options.plan));
        return std::any();
      },
      // A tree file or a checkpoint needs no config; the template and --diff need the resolved one.
      .model_config =
          [](const CommandOptions& options) {
            ConfigOptions config = options.plan.config;
            if (!options.diff && (!options.plan.tree.file.empty() || !options.plan.tree.checkpoint.empty()))
              config.config.clear();
            return config;
          },
      .run = RunTree,
      .document = TreeDocument,
      .terminal = ShowTree,
  };
}

}  // namespace easyplan::api
