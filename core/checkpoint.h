#ifndef EASYPLAN_CORE_CHECKPOINT_H_
#define EASYPLAN_CORE_CHECKPOINT_H_

// The tensors of a checkpoint on disk, from metadata only: a .safetensors file's header, an index
// file (model.safetensors.index.json, pytorch_model.bin.index.json) plus the headers of the shards
// that lie beside it, or a directory holding either. Weights are never read, and .bin shards are
// never opened (their tensors are known by name only).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/file_system.h"
#include "core/limits.h"
#include "core/param_tree.h"
#include "core/safetensors.h"
#include "core/status.h"

namespace easyplan {

/// Index files larger than this are refused (the largest real ones are a few MB).
inline constexpr int64_t kMaxCheckpointIndexBytes = int64_t{64} << 20;

/// One tensor of a checkpoint.
struct CheckpointTensor {
  /// The name always; shape and dtype only when has_metadata (otherwise an empty shape and the
  /// default dtype, which mean nothing).
  TensorEntry entry;
  /// False when only an index names the tensor: its shard is a .bin file or is not beside the index.
  bool has_metadata = false;
  /// File name (not path) of the file that holds the tensor, beside the index or in the directory.
  std::string shard;

  friend bool operator==(const CheckpointTensor&, const CheckpointTensor&) = default;
};

/// What a checkpoint's metadata says.
struct Checkpoint {
  /// The file read: the index or the .safetensors file (the directory itself when several
  /// .safetensors files of a directory were merged).
  std::string source;
  /// In index order (weight_map as the file lists it), else in header (data-offset) order, shard
  /// files taken in name order.
  std::vector<CheckpointTensor> tensors;
  /// The index's metadata.total_size, when an index was read and has one.
  std::optional<int64_t> index_total_size;
  /// Shards the index names that are not beside it, in the order the index first names them. Not an
  /// error: their tensors are listed by name only, and the caller decides.
  std::vector<std::string> missing_shards;

  /// True when every tensor has a shape and a dtype.
  bool HasAllMetadata() const;

  /// The bytes of all tensors (sub-byte dtypes rounded up per tensor), to compare with
  /// index_total_size. BadInput naming the first tensor without metadata, or on int64 overflow.
  StatusOr<int64_t> TotalBytes() const;
};

/// An index file: `{"metadata": {"total_size": N, ...}, "weight_map": {tensor name: shard file}}`.
struct CheckpointIndex {
  std::optional<int64_t> total_size;
  std::vector<std::pair<std::string, std::string>> weight_map;  ///< (tensor, shard) in file order
};

/// Parses an index file's text. weight_map must be an object of strings naming plain files (no '/',
/// '\\', "." or ".."; no path may leave the index's directory), without duplicate tensor names;
/// metadata, when present, is an object whose total_size, when present, is a non-negative integer.
/// Other metadata keys are ignored. Errors are BadInput at the offending value's line:column.
StatusOr<CheckpointIndex> ParseCheckpointIndex(std::string_view text, const std::string& path,
                                               const Limits& limits = {});

/// Reads a checkpoint's tensors from `path`, which may be
///  - a `*.safetensors` file: its header;
///  - an index `*.json`: the index, plus the header of each `.safetensors` shard beside it (each read
///    once), cross-checked both ways: a shard must hold every tensor the index maps to it and no
///    other; shards not beside the index are listed in missing_shards; `.bin` shards are not opened;
///  - a directory: the first that exists of model.safetensors.index.json, model.safetensors, all
///    `*.safetensors` files (merged; a tensor in two files is an error naming both) and
///    pytorch_model.bin.index.json.
/// Index files over kMaxCheckpointIndexBytes are refused before they are read.
StatusOr<Checkpoint> ReadCheckpoint(const FileSystem& fs, const std::string& path,
                                    const SafetensorsLimits& limits = {});

}  // namespace easyplan

#endif  // EASYPLAN_CORE_CHECKPOINT_H_
