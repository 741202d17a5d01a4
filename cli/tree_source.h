#ifndef EASYPLAN_CLI_TREE_SOURCE_H_
#define EASYPLAN_CLI_TREE_SOURCE_H_

// Where a parameter tree comes from: a family template over a resolved config, a checkpoint's
// metadata, or the user's own JSON dump. Shared by `tree` and the commands that plan a tree.

#include <optional>
#include <string>

#include "cli/context.h"
#include "core/param_tree.h"
#include "core/tree_diff.h"
#include "schemas/resolver.h"
#include "schemas/schema_set.h"

namespace easyplan::cli {

struct TreeRequest {
  Layout layout = Layout::kEasyDel;
  std::optional<DType> dtype;
  bool include_buffers = false;
  int64_t max_tensors = 10'000'000;
};

/// The template tree of `resolved`'s family. BadInput when the family has no template (with a
/// did-you-mean over the families that have one, and a pointer to --tree).
StatusOr<ParamTree> BuildTemplateTree(const schemas::ResolvedConfig& resolved, schemas::SchemaSet& schemas,
                                      const TreeRequest& request);

/// A tree JSON file (`tree --format json` shape; "-" = stdin).
StatusOr<ParamTree> LoadUserTree(Context& ctx, const std::string& path, int64_t max_tensors);

/// A checkpoint's tensors as an HF-layout tree. Every tensor must have metadata (a names-only index
/// cannot be printed as a tree: its shards are not beside it, and the message says which).
StatusOr<ParamTree> LoadCheckpointTree(Context& ctx, const std::string& path, const TreeRequest& request);

/// The template's HF tree (buffers included) against the checkpoint at `path`.
StatusOr<TreeDiff> DiffTemplateWithCheckpoint(Context& ctx, const schemas::ResolvedConfig& resolved,
                                              schemas::SchemaSet& schemas, const TreeRequest& request,
                                              const std::string& path);

Json DiffToJson(const TreeDiff& diff);
std::string DiffToText(const TreeDiff& diff);

}  // namespace easyplan::cli

#endif  // EASYPLAN_CLI_TREE_SOURCE_H_
