#ifndef EASYPLAN_CORE_TREE_DIFF_H_
#define EASYPLAN_CORE_TREE_DIFF_H_

// What separates the tree a config implies from the tree a checkpoint holds: the way a user finds a
// wrong config before a long job, and the way easyplan's own templates are verified.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/checkpoint.h"
#include "core/param_tree.h"

namespace easyplan {

struct TreeDifference {
  enum class Kind { kMissing, kExtra, kShape, kDType, kTotalSize };
  Kind kind;
  std::string name;                     ///< tensor name ("" for kTotalSize)
  std::optional<TensorEntry> expected;  ///< from the template (kMissing, kShape, kDType)
  std::optional<TensorEntry> found;     ///< from the checkpoint (kExtra, kShape, kDType)
  int64_t expected_bytes = 0;           ///< kTotalSize only
  int64_t found_bytes = 0;
};

std::string_view TreeDifferenceKindName(TreeDifference::Kind kind);  // "missing", "extra", "shape", ...

struct TreeDiff {
  std::string checkpoint;        ///< the file read
  int64_t expected_tensors = 0;  ///< template tensors, buffers counted only when stored
  int64_t checkpoint_tensors = 0;
  int64_t names_only = 0;  ///< checkpoint tensors known by name only (shapes not compared)
  std::vector<std::string> missing_shards;
  std::vector<TreeDifference> differences;  ///< missing and mismatches in template order, then extras

  bool Clean() const { return differences.empty(); }
};

/// Compares `expected` (HF layout, buffers included) with `checkpoint`. Buffers the checkpoint does not
/// store are not differences (only some checkpoints store them). When the checkpoint has an index
/// total_size and the names agree, the expected bytes of the stored tensors must equal it.
TreeDiff DiffTrees(const ParamTree& expected, const Checkpoint& checkpoint);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_TREE_DIFF_H_
