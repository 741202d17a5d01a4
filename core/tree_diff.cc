#include "core/tree_diff.h"

#include <unordered_map>

#include "core/checked_math.h"
#include "core/enum_table.h"

namespace easyplan {

namespace {

// The kinds as `tree --diff` reports them.
constexpr EnumName<TreeDifference::Kind> kTreeDifferenceKindNames[] = {
    {TreeDifference::Kind::kMissing, "missing"},      {TreeDifference::Kind::kExtra, "extra"},
    {TreeDifference::Kind::kShape, "shape"},          {TreeDifference::Kind::kDType, "dtype"},
    {TreeDifference::Kind::kTotalSize, "total_size"},
};

}  // namespace

std::string_view TreeDifferenceKindName(TreeDifference::Kind kind) { return NameOf(kTreeDifferenceKindNames, kind); }

TreeDiff DiffTrees(const ParamTree& expected, const Checkpoint& checkpoint) {
  TreeDiff diff;
  diff.checkpoint = checkpoint.source;
  diff.checkpoint_tensors = static_cast<int64_t>(checkpoint.tensors.size());
  diff.missing_shards = checkpoint.missing_shards;

  std::unordered_map<std::string_view, const CheckpointTensor*> stored;
  stored.reserve(checkpoint.tensors.size());
  for (const CheckpointTensor& tensor : checkpoint.tensors) {
    stored.emplace(tensor.entry.name, &tensor);
    if (!tensor.has_metadata) ++diff.names_only;
  }
  std::unordered_map<std::string_view, const TensorEntry*> wanted;
  wanted.reserve(expected.tensors.size());
  int64_t expected_bytes = 0;
  bool bytes_known = true;
  for (const TensorEntry& tensor : expected.tensors) {
    wanted.emplace(tensor.name, &tensor);
    auto it = stored.find(tensor.name);
    // Optional buffers count as expected only when the checkpoint stores them.
    if (it != stored.end() || tensor.role != TensorRole::kBuffer) ++diff.expected_tensors;
    if (it == stored.end()) {
      if (tensor.role != TensorRole::kBuffer) {
        diff.differences.push_back({TreeDifference::Kind::kMissing, tensor.name, tensor, std::nullopt});
      }
      continue;
    }
    std::optional<int64_t> numel = tensor.shape.NumElements();
    std::optional<int64_t> bytes = numel ? ByteSize(*numel, DTypeBits(tensor.dtype)) : std::nullopt;
    std::optional<int64_t> sum = bytes ? CheckedAdd(expected_bytes, *bytes) : std::nullopt;
    bytes_known = bytes_known && sum.has_value();
    if (sum) expected_bytes = *sum;
    const CheckpointTensor& found = *it->second;
    if (!found.has_metadata) continue;
    if (found.entry.shape != tensor.shape) {
      diff.differences.push_back({TreeDifference::Kind::kShape, tensor.name, tensor, found.entry});
    } else if (found.entry.dtype != tensor.dtype) {
      diff.differences.push_back({TreeDifference::Kind::kDType, tensor.name, tensor, found.entry});
    }
  }
  for (const CheckpointTensor& tensor : checkpoint.tensors) {
    if (!wanted.contains(tensor.entry.name)) {
      diff.differences.push_back({TreeDifference::Kind::kExtra, tensor.entry.name, std::nullopt,
                                  tensor.has_metadata ? std::optional<TensorEntry>(tensor.entry) : std::nullopt});
    }
  }
  if (diff.differences.empty() && checkpoint.index_total_size && bytes_known &&
      expected_bytes != *checkpoint.index_total_size) {
    TreeDifference size{TreeDifference::Kind::kTotalSize, "", std::nullopt, std::nullopt};
    size.expected_bytes = expected_bytes;
    size.found_bytes = *checkpoint.index_total_size;
    diff.differences.push_back(size);
  }
  return diff;
}

}  // namespace easyplan
