#include "cli/tree_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "cli/config_input.h"
#include "cli/tree_format.h"
#include "core/checkpoint.h"
#include "core/did_you_mean.h"
#include "core/human.h"
#include "core/tree_json.h"
#include "schemas/tree_builder.h"

namespace easyplan::cli {
namespace {

SafetensorsLimits CheckpointLimits(const Context& ctx) {
  SafetensorsLimits limits;
  limits.document = ctx.limits;
  return limits;
}

Json EntryJson(const TensorEntry& entry) {
  Json json = Json::object();
  json["shape"] = Json(std::vector<int64_t>(entry.shape.dims().begin(), entry.shape.dims().end()));
  json["dtype"] = std::string(DTypeName(entry.dtype));
  return json;
}

std::string EntryText(const TensorEntry& entry) {
  return entry.shape.ToString() + " " + std::string(DTypeName(entry.dtype));
}

}  // namespace

StatusOr<ParamTree> BuildTemplateTree(const schemas::ResolvedConfig& resolved, schemas::SchemaSet& schemas,
                                      const TreeRequest& request) {
  std::string model_type =
      resolved.config.value("model_type", Json()).is_string() ? resolved.config["model_type"].get<std::string>() : "";
  const schemas::TreeTemplate* tree = nullptr;
  if (!resolved.family.empty()) {
    EP_ASSIGN_OR_RETURN(tree, schemas.Tree(resolved.family));
  }
  if (tree == nullptr) {
    std::vector<std::string> known = schemas.TreeNames();
    std::string message = model_type.empty() ? "the config has no model_type, so easyplan has no parameter tree for it"
                                             : "no parameter-tree template for model_type '" + model_type + "'";
    if (auto suggestion = SuggestClosest(model_type, known)) message += " (did you mean '" + *suggestion + "'?)";
    return Status::BadInput({"", "/model_type"}, message,
                            {"templates exist for " + JoinQuoted(known),
                             "for another model, dump its tree as JSON and pass --tree FILE.json"});
  }
  schemas::TreeOptions options;
  options.layout = request.layout;
  options.dtype = request.dtype;
  options.include_buffers = request.include_buffers;
  options.max_tensors = request.max_tensors;
  return schemas::BuildParamTree(*tree, resolved.config, options);
}

StatusOr<ParamTree> LoadUserTree(Context& ctx, const std::string& path, int64_t max_tensors) {
  // A tree document holds a few values per tensor (the entry, its name, shape, dims, dtype, role), so
  // --max-tensors already bounds it; the general --max-values must not refuse a tree --max-tensors
  // allows. kValuesPerTensor covers rank 10 with room to spare.
  constexpr int64_t kValuesPerTensor = 16;
  Limits limits = ctx.limits;
  if (max_tensors > 0 && max_tensors <= (std::numeric_limits<int64_t>::max() - 16) / kValuesPerTensor) {
    limits.max_values = std::max<size_t>(limits.max_values, static_cast<size_t>(max_tensors * kValuesPerTensor + 16));
  }
  // The scanner when the tree is in its subset; the position-tracking parser otherwise.
  if (path == "-") {
    EP_ASSIGN_OR_RETURN(std::string text, ReadStdin(ctx));
    return ParseTreeJson(text, "<stdin>", limits, max_tensors);
  }
  // Mapped, not copied: an 11 MB tree is read in place.
  StatusOr<PaddedText> text = ctx.fs.ReadFilePadded(path, ctx.limits.max_input_bytes, /*padding=*/0);
  if (!text.ok()) {
    Status status = text.status();
    if (status.diag().message.find("is larger than") != std::string::npos) {
      status.mutable_diag().notes.push_back(LimitNote("--max-input-bytes", ctx.limits.max_input_bytes));
    }
    return status;
  }
  return ParseTreeJson(text->text(), path, limits, max_tensors);
}

StatusOr<ParamTree> LoadCheckpointTree(Context& ctx, const std::string& path, const TreeRequest& request) {
  EP_ASSIGN_OR_RETURN(Checkpoint checkpoint, ReadCheckpoint(ctx.fs, path, CheckpointLimits(ctx)));
  if (static_cast<int64_t>(checkpoint.tensors.size()) > request.max_tensors) {
    return Status::BadInput({checkpoint.source}, fmt::format("{} tensors exceed the limit of {} (raise it with "
                                                             "--max-tensors)",
                                                             checkpoint.tensors.size(), request.max_tensors));
  }
  if (!checkpoint.HasAllMetadata()) {
    std::vector<std::string> notes;
    if (!checkpoint.missing_shards.empty()) {
      notes.push_back("shards not beside the index: " + JoinQuoted(checkpoint.missing_shards));
    }
    notes.push_back("compare names with a config instead: easyplan tree CONFIG --from " + path + " --diff");
    return Status::BadInput({checkpoint.source},
                            "the index names its tensors but their shapes and dtypes live in shard headers "
                            "that are not available here",
                            notes);
  }
  ParamTree tree;
  tree.layout = Layout::kHf;
  tree.tensors.reserve(checkpoint.tensors.size());
  for (CheckpointTensor& tensor : checkpoint.tensors) tree.tensors.push_back(std::move(tensor.entry));
  return tree;
}

StatusOr<TreeDiff> DiffTemplateWithCheckpoint(Context& ctx, const schemas::ResolvedConfig& resolved,
                                              schemas::SchemaSet& schemas, const TreeRequest& request,
                                              const std::string& path) {
  TreeRequest hf = request;
  hf.layout = Layout::kHf;
  hf.include_buffers = true;
  EP_ASSIGN_OR_RETURN(ParamTree expected, BuildTemplateTree(resolved, schemas, hf));
  EP_ASSIGN_OR_RETURN(Checkpoint checkpoint, ReadCheckpoint(ctx.fs, path, CheckpointLimits(ctx)));
  return DiffTrees(expected, checkpoint);
}

Json DiffToJson(const TreeDiff& diff) {
  Json json = Json::object();
  json["checkpoint"] = diff.checkpoint;
  json["expected_tensors"] = diff.expected_tensors;
  json["checkpoint_tensors"] = diff.checkpoint_tensors;
  json["names_only"] = diff.names_only;
  json["missing_shards"] = Json(diff.missing_shards);
  Json items = Json::array();
  for (const TreeDifference& item : diff.differences) {
    Json entry = Json::object();
    entry["kind"] = std::string(TreeDifferenceKindName(item.kind));
    if (item.kind == TreeDifference::Kind::kTotalSize) {
      entry["expected_bytes"] = item.expected_bytes;
      entry["found_bytes"] = item.found_bytes;
    } else {
      entry["name"] = item.name;
      entry["expected"] = item.expected ? EntryJson(*item.expected) : Json();
      entry["found"] = item.found ? EntryJson(*item.found) : Json();
    }
    items.push_back(std::move(entry));
  }
  json["differences"] = std::move(items);
  json["clean"] = diff.Clean();
  return json;
}

std::string DiffToText(const TreeDiff& diff) {
  std::string out;
  for (const TreeDifference& item : diff.differences) {
    switch (item.kind) {
      case TreeDifference::Kind::kMissing:
        out += fmt::format("missing     {}  (template: {})\n", item.name, EntryText(*item.expected));
        break;
      case TreeDifference::Kind::kExtra:
        out += fmt::format("extra       {}{}\n", item.name,
                           item.found ? "  (checkpoint: " + EntryText(*item.found) + ")" : "");
        break;
      case TreeDifference::Kind::kShape:
      case TreeDifference::Kind::kDType:
        out += fmt::format("{:<11} {}  template {}, checkpoint {}\n", TreeDifferenceKindName(item.kind), item.name,
                           EntryText(*item.expected), EntryText(*item.found));
        break;
      case TreeDifference::Kind::kTotalSize:
        out += fmt::format(
            "total_size  the index says {} bytes, the template's tensors hold {} bytes (a dtype differs?)\n",
            WithThousands(item.found_bytes), WithThousands(item.expected_bytes));
        break;
    }
  }
  out += fmt::format("{}: {} template tensors, {} checkpoint tensors", diff.checkpoint,
                     WithThousands(diff.expected_tensors), WithThousands(diff.checkpoint_tensors));
  if (diff.names_only > 0) out += fmt::format(" ({} by name only)", WithThousands(diff.names_only));
  size_t count = diff.differences.size();
  out += diff.Clean() ? "; they match\n" : fmt::format("; {} difference{}\n", count, count == 1 ? "" : "s");
  return out;
}

}  // namespace easyplan::cli
