#ifndef EASYPLAN_PLANNER_LAYOUT_H_
#define EASYPLAN_PLANNER_LAYOUT_H_

// A PartitionSpec laid on a Mesh for one tensor shape, with jax.sharding.NamedSharding semantics
// (jax/_src/named_sharding.py, op_shardings.py, sharding.py): a dim's entry (a1, ..., ak) splits it into prod(size(ai))
// blocks, the first axis major; mesh axes the spec does not name replicate; size-1 axes are no-ops. Device ids are
// positions in the row-major mesh array.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/mesh.h"
#include "core/partition_spec.h"
#include "core/shape.h"
#include "core/status.h"

namespace easyplan::planner {

/// What to do with a dim whose size its entry's axes do not divide.
enum class UnevenMode {
  kReplicate,  ///< eformer's get_corrected_named_sharding: the whole entry becomes None (a warning)
  kError,      ///< JAX's device_put/jit rule: IndivisibleError
  kChunk,      ///< torch.chunk per axis, nested in the entry's order as DTensor does; shards may be
               ///< smaller or empty
};

inline constexpr UnevenMode kUnevenModes[] = {UnevenMode::kReplicate, UnevenMode::kError, UnevenMode::kChunk};
std::string_view UnevenModeName(UnevenMode mode);                  // "replicate" | "error" | "chunk"
std::optional<UnevenMode> ParseUnevenMode(std::string_view text);  // the inverse; nullopt otherwise

/// One change the correction made or one problem it found, for findings.
struct SpecIssue {
  enum class Kind {
    kUnknownAxis,     ///< an entry names an axis the mesh lacks (error; entry -> None)
    kDuplicateAxis,   ///< an axis is used twice in the spec (error, JAX DuplicateSpecError)
    kTruncated,       ///< the spec had more entries than the tensor's rank (warning)
    kUnevenReplaced,  ///< kReplicate: a dim not divisible by its entry's axes became None (warning)
    kIndivisible,     ///< kError: a dim not divisible by its entry's axes (error)
    kUnevenChunked,   ///< kChunk: a dim not divisible, chunked (note)
  };
  Kind kind;
  int dim = -1;            ///< tensor dim concerned, -1 for whole-spec issues
  std::string axis;        ///< the axis concerned (unknown / duplicate)
  int64_t dim_size = 0;    ///< the dim's size (uneven / indivisible)
  int64_t partitions = 0;  ///< the entry's tiling factor (uneven / indivisible)
  std::string message;     ///< one sentence, JAX's wording where JAX has one
};

/// kUnknownAxis, kDuplicateAxis and kIndivisible are errors; kTruncated and kUnevenReplaced
/// warnings; kUnevenChunked a note.
Severity SpecIssueSeverity(SpecIssue::Kind kind);

/// The spec that is actually laid out for a tensor of `shape`, and what changed on the way.
struct CorrectedSpec {
  PartitionSpec spec;
  std::vector<SpecIssue> issues;
  bool HasError() const;
};

/// Applies, in order: truncation to the rank (eformer match_partition_rules), unknown-axis and
/// duplicate-axis checks, then the uneven rule of `mode`. Under kReplicate it also follows
/// get_corrected_named_sharding's padding with None and its collapse of an all-None spec to P();
/// under kError and kChunk the spec keeps its written length. Rank-0 tensors get P().
CorrectedSpec CorrectSpec(const Shape& shape, const PartitionSpec& spec, const Mesh& mesh, UnevenMode mode);

/// [start, stop) along one dim.
using Range = std::pair<int64_t, int64_t>;

/// The slices of one tensor on every device of the mesh. Built from a corrected spec (unknown axes
/// removed): construction fails (Internal) if `spec` names an axis the mesh lacks, names one twice,
/// has more entries than the rank, or, under a mode other than kChunk, does not divide a dim.
class TensorLayout {
 public:
  static StatusOr<TensorLayout> Make(const Shape& shape, const PartitionSpec& spec, const Mesh& mesh, UnevenMode mode);

  const Shape& shape() const { return shape_; }
  /// Blocks along each dim (1 for unsharded dims): the product of the entry's axis sizes.
  const std::vector<int64_t>& tiles() const { return tiles_; }
  /// Devices holding each block: the product of the sizes of the axes the spec does not name.
  int64_t replicas() const { return replicas_; }
  /// The largest shard (ceil division per dim); every shard for an evenly divisible layout.
  const Shape& shard_shape() const { return shard_shape_; }
  /// True when every device holds the same shard shape (always unless kChunk on an uneven dim).
  bool even() const { return even_; }

  /// The slice `device` holds, one range per tensor dim, and its replica id (number of earlier
  /// devices, in mesh-flat order, holding the same slice). Chunked shards may be empty
  /// (start == stop; the start is then the dim size, as DTensor reports it); empty shards of
  /// different blocks count as different slices for the replica id (it numbers the devices that
  /// share the device's block, i.e. the mixed-radix number of its coordinates on unnamed axes).
  /// O(rank + mesh axes); REQUIRES: 0 <= device < the mesh's device count.
  std::vector<Range> SliceOf(int64_t device) const;
  int64_t ReplicaId(int64_t device) const;
  /// Elements device `device` holds (prod of its ranges' lengths).
  int64_t ElementsOn(int64_t device) const;

 private:
  std::vector<int64_t> CoordinatesOf(int64_t device) const;
  Range DimRange(int dim, const std::vector<int64_t>& coords) const;

  Shape shape_;
  std::vector<int64_t> mesh_shape_;         // the mesh's axis sizes (copied: a layout is a value)
  std::vector<std::vector<int>> dim_axes_;  // mesh axis indices per tensor dim, major first
  std::vector<int> unused_axes_;            // mesh axes the spec does not name, in mesh order
  std::vector<int64_t> tiles_;
  int64_t replicas_ = 1;
  Shape shard_shape_;
  bool even_ = true;
  UnevenMode mode_ = UnevenMode::kReplicate;
  int64_t num_devices_ = 1;
};

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_LAYOUT_H_
