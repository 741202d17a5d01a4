#include "api/tree_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "api/config_input.h"
#include "core/checkpoint.h"
#include "core/did_you_mean.h"
#include "core/json_parse.h"
#include "core/tree_json.h"
#include "schemas/tree_builder.h"

namespace easyplan::api {
namespace {

SafetensorsLimits CheckpointLimits(const Environment& env) {
  SafetensorsLimits limits;
  limits.document = env.limits;
  return limits;
}

Json EntryJson(const TensorEntry& entry) {
  Json json = Json::object();
  json["shape"] = Json(std::vector<int64_t>(entry.shape.dims().begin(), entry.shape.dims().end()));
  json["dtype"] = std::string(DTypeName(entry.dtype));
  return json;
}

}  // namespace

StatusOr<ParamTree> BuildTemplateTree(const schemas::TreeTemplate& tree_template, const Json& config,
                                      const TreeRequest& request) {
  schemas::TreeOptions options;
  options.layout = request.layout;
  options.dtype = request.dtype;
  options.include_buffers = request.include_buffers;
  options.max_tensors = request.max_tensors;
  options.easydel_version = request.easydel_version;
  return schemas::BuildParamTree(tree_template, config, options);
}

StatusOr<ParamTree> LoadUserTree(const Environment& env, const std::string& path, int64_t max_tensors) {
  // A tree document holds a few values per tensor (the entry, its name, shape, dims, dtype, role), so
  // --max-tensors already bounds it; the general --max-values must not refuse a tree --max-tensors
  // allows. kValuesPerTensor covers rank 10 with room to spare.
  constexpr int64_t kValuesPerTensor = 16;
  Limits limits = env.limits;
  if (max_tensors > 0 && max_tensors <= (std::numeric_limits<int64_t>::max() - 16) / kValuesPerTensor) {
    limits.max_values = std::max<size_t>(limits.max_values, static_cast<size_t>(max_tensors * kValuesPerTensor + 16));
  }
  // The scanner when the tree is in its subset; the position-tracking parser otherwise.
  if (path == "-") {
    EP_ASSIGN_OR_RETURN(std::string text, ReadStdin(env));
    return ParseTreeJson(text, "<stdin>", limits, max_tensors);
  }
  // Mapped, not copied: an 11 MB tree is read in place.
  StatusOr<PaddedText> text = env.fs->ReadFilePadded(path, env.limits.max_input_bytes, /*padding=*/0);
  if (!text.ok()) {
    Status status = text.status();
    if (status.diag().message.find("is larger than") != std::string::npos) {
      status.mutable_diag().notes.push_back(LimitNote("--max-input-bytes", env.limits.max_input_bytes));
    }
    return status;
  }
  return ParseTreeJson(text->text(), path, limits, max_tensors);
}

namespace {

// A model config given where a checkpoint belongs.
Status CheckNotAModelConfig(const Environment& env, const std::string& from) {
  if (from.ends_with(".json") && !env.fs->IsDirectory(from)) {
    StatusOr<PaddedText> text = env.fs->ReadFilePadded(from, env.limits.max_input_bytes, /*padding=*/0);
    if (text.ok()) {
      StatusOr<Document> parsed = ParseJsonDocument(text->text(), from, env.limits);
      const Json doc = parsed.ok() ? parsed->root() : Json();
      if (doc.is_object() && !doc.contains("weight_map") &&
          (doc.contains("model_type") || doc.contains("architectures"))) {
        return Status::BadInput(
            SourceLoc{from, "", 0, 0},
            "this is a model config, not a checkpoint: --from reads checkpoint metadata (a .safetensors file, "
            "model.safetensors.index.json, or a directory holding them)",
            {"the config's own tree: `easyplan tree " + from + "` (EasyDeL names) or `easyplan tree " + from +
                 " --layout hf` (HF names)",
             "against a checkpoint: `easyplan tree " + from + " --from CHECKPOINT --diff`"});
      }
    }
  }
  return Status();
}

}  // namespace

Status CheckCheckpointSource(const Environment& env, const std::string& from, Layout layout) {
  EP_RETURN_IF_ERROR(CheckNotAModelConfig(env, from));  // before anything about layouts
  if (layout != Layout::kHf) {
    return Status::BadInput(
        {}, "a checkpoint's names are HF names: use --layout hf with --from",
        {"to see the EasyDeL names, run `easyplan tree CONFIG` (and --diff against the checkpoint)"});
  }
  return Status();
}

StatusOr<ParamTree> LoadCheckpointTree(const Environment& env, const std::string& path, const TreeRequest& request) {
  EP_RETURN_IF_ERROR(CheckNotAModelConfig(env, path));
  EP_ASSIGN_OR_RETURN(Checkpoint checkpoint, ReadCheckpoint(*env.fs, path, CheckpointLimits(env)));
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

StatusOr<TreeDiff> DiffWithCheckpoint(const Environment& env, const ParamTree& expected, const std::string& path) {
  EP_ASSIGN_OR_RETURN(Checkpoint checkpoint, ReadCheckpoint(*env.fs, path, CheckpointLimits(env)));
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

}  // namespace easyplan::api
