// `easyplan tree CONFIG`: the model's parameter tree from its family template, a checkpoint's
// metadata (--from) or the user's own dump (--tree), and the diff between template and checkpoint.
#include <memory>

#include "api/tree_source.h"
#include "cli/commands.h"
#include "cli/config_flags.h"
#include "cli/tree_format.h"
#include "core/emit.h"

namespace easyplan::cli {
namespace {

struct TreeFlags {
  api::ConfigOptions config;
  std::string layout = "easydel";
  std::string dtype;
  bool include_buffers = false;
  std::string format = "table";
  std::string output;
  std::string from;
  bool diff = false;
  std::string tree;
  int64_t max_tensors = 10'000'000;
};

std::string Render(const ParamTree& tree, const TreeTotals& totals, const std::string& format) {
  if (format == "json") return TreeToJsonText(tree, totals);
  if (format == "csv") return TreeToCsv(tree, totals);
  return TreeToTable(tree, totals);
}

StatusOr<int> RunTree(const TreeFlags& flags, Context& ctx) {
  EP_RETURN_IF_ERROR(CheckChoice("--format", flags.format, {"table", "json", "csv"}));
  EP_RETURN_IF_ERROR(CheckChoice("--layout", flags.layout, {"easydel", "hf"}));
  if (flags.max_tensors < 1) {
    return Status::BadInput({}, "--max-tensors must be at least 1, found " + std::to_string(flags.max_tensors));
  }
  api::TreeSpec spec;
  spec.layout = *ParseLayout(flags.layout);
  spec.include_buffers = flags.include_buffers;
  spec.max_tensors = flags.max_tensors;
  if (!flags.dtype.empty()) {
    spec.dtype = ParseDType(flags.dtype);
    if (!spec.dtype) return Status::BadInput({}, "--dtype '" + flags.dtype + "' is not a dtype name");
  }
  if (flags.diff && (flags.from.empty() || flags.config.config.empty())) {
    return Status::BadInput({}, "--diff compares a config's template with a checkpoint: give CONFIG and --from PATH");
  }
  if (!flags.tree.empty() && !flags.from.empty()) {
    return Status::BadInput({}, "--tree and --from are two sources for the same tree: give one");
  }
  if (flags.config.config.empty() && flags.tree.empty() && flags.from.empty()) {
    return Status::BadInput({}, "CONFIG is required (or --tree FILE.json, or --from CHECKPOINT)");
  }

  if (flags.diff) {
    EP_ASSIGN_OR_RETURN(std::shared_ptr<const api::Model> model, LoadModel(ctx, flags.config));
    api::TreeSpec hf = spec;
    hf.layout = Layout::kHf;
    hf.include_buffers = true;
    EP_ASSIGN_OR_RETURN(api::Model::TreePtr expected, model->Tree(hf));
    EP_ASSIGN_OR_RETURN(TreeDiff diff, api::DiffWithCheckpoint(model->env(), *expected, flags.from));
    std::string text = flags.format == "json" ? EmitJson(api::DiffToJson(diff)) : DiffToText(diff);
    EP_RETURN_IF_ERROR(WriteOutput(ctx, flags.output, text));
    return diff.Clean() ? kExitOk : kExitFindings;
  }

  if (!flags.tree.empty()) {
    spec.source = api::TreeSpec::Source::kFile;
    spec.path = flags.tree;
  } else if (!flags.from.empty()) {
    EP_RETURN_IF_ERROR(api::CheckCheckpointSource(EnvironmentOf(ctx), flags.from, spec.layout));
    spec.source = api::TreeSpec::Source::kCheckpoint;
    spec.path = flags.from;
  }
  // A tree file or a checkpoint needs no config; the template needs the resolved one.
  api::ConfigOptions config = flags.config;
  if (spec.source != api::TreeSpec::Source::kTemplate) config.config.clear();
  EP_ASSIGN_OR_RETURN(std::shared_ptr<const api::Model> model, LoadModel(ctx, config));
  EP_ASSIGN_OR_RETURN(api::Model::TreePtr loaded, model->Tree(spec));
  const ParamTree& tree = *loaded;
  EP_ASSIGN_OR_RETURN(TreeTotals totals, tree.Totals());
  EP_RETURN_IF_ERROR(WriteOutput(ctx, flags.output, Render(tree, totals, flags.format)));
  return kExitOk;
}

}  // namespace

std::function<int(Context&)> AddTreeCommand(CLI::App& app) {
  auto flags = std::make_shared<TreeFlags>();
  CLI::App* cmd = app.add_subcommand("tree", "list every tensor of the model: name, shape, dtype, size");
  AddConfigFlags(cmd, flags->config, /*config_optional=*/true);
  cmd->add_option("--layout", flags->layout,
                  "easydel (flax paths, kernels [in, out], experts stacked; the default) or hf (checkpoint names)");
  cmd->add_option("--dtype", flags->dtype, "parameter dtype (default: the config's torch_dtype / dtype)");
  cmd->add_flag("--include-buffers", flags->include_buffers,
                "add the buffers some checkpoints store (rotary inv_freq, causal-mask tables)");
  cmd->add_option("--format", flags->format, "table (default), json or csv");
  cmd->add_option("-o,--output", flags->output, "write to FILE (atomically) instead of stdout");
  cmd->add_option("--from", flags->from,
                  "read the tree from checkpoint metadata: a .safetensors file (header only), a "
                  "model.safetensors.index.json, or a directory holding them");
  cmd->add_flag("--diff", flags->diff,
                "with CONFIG and --from: report tensors the template expects but the checkpoint lacks, extra "
                "ones, and shape or dtype mismatches (exit 1 when they differ)");
  cmd->add_option("--tree", flags->tree, "read the tree from a JSON file of the `tree --format json` shape");
  cmd->add_option("--max-tensors", flags->max_tensors, "refuse trees with more tensors than this (default 10000000)");
  return [flags](Context& ctx) {
    StatusOr<int> code = RunTree(*flags, ctx);
    return code.ok() ? *code : ReportError(ctx, code.status());
  };
}

}  // namespace easyplan::cli
