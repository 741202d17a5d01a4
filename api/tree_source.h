#ifndef EASYPLAN_API_TREE_SOURCE_H_
#define EASYPLAN_API_TREE_SOURCE_H_

// Where a parameter tree comes from: a family template over a resolved config, a checkpoint's
// metadata, or the user's own JSON dump. api::Model caches what these return.

#include <optional>
#include <string>

#include "api/environment.h"
#include "core/param_tree.h"
#include "core/tree_diff.h"
#include "schemas/tree_template.h"

namespace easyplan::api {

struct TreeRequest {
  Layout layout = Layout::kEasyDel;
  std::optional<DType> dtype;
  bool include_buffers = false;
  int64_t max_tensors = 10'000'000;
  std::string easydel_version;  ///< schemas::TreeOptions::easydel_version
};

/// `tree_template` expanded over `config`.
StatusOr<ParamTree> BuildTemplateTree(const schemas::TreeTemplate& tree_template, const Json& config,
                                      const TreeRequest& request);

/// A tree JSON file (`tree --format json` shape; "-" = stdin).
StatusOr<ParamTree> LoadUserTree(const Environment& env, const std::string& path, int64_t max_tensors);

/// A checkpoint's tensors as an HF-layout tree. Every tensor must have metadata (a names-only index
/// cannot be printed as a tree: its shards are not beside it, and the message says which).
/// `tree --from FROM`: BadInput when FROM is a model config (a .json with model_type or architectures
/// and no weight_map), naming the command meant, or when the layout is not hf (a checkpoint's names are
/// HF names).
Status CheckCheckpointSource(const Environment& env, const std::string& from, Layout layout);

StatusOr<ParamTree> LoadCheckpointTree(const Environment& env, const std::string& path, const TreeRequest& request);

/// The checkpoint at `path` (headers only) against `expected`, the template's HF tree with buffers.
StatusOr<TreeDiff> DiffWithCheckpoint(const Environment& env, const ParamTree& expected, const std::string& path);

/// The JSON document of `tree --diff --format json`.
Json DiffToJson(const TreeDiff& diff);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_TREE_SOURCE_H_
