#ifndef EASYPLAN_KERNELS_DIST_TENSOR_H_
#define EASYPLAN_KERNELS_DIST_TENSOR_H_

// A tensor spread over simulated devices with jax.sharding.NamedSharding semantics, computed here
// independently of planner/layout.cc so the two can check each other: a dim whose entry names mesh
// axes (a1, ..., ak) is cut into prod(size(ai)) equal blocks, a1 major, and device d holds the block
// numbered by its coordinates on those axes; axes no entry names replicate. `partial` lists mesh axes
// over which the device values are unreduced partial sums (an op's result before its all-reduce).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/mesh.h"
#include "core/partition_spec.h"
#include "core/status.h"
#include "kernels/host_tensor.h"

namespace easyplan::kernels {

/// Mesh axis indices per tensor dim (major first), plus pending-sum axes.
struct DistSpec {
  std::vector<std::vector<int>> dims;
  std::vector<int> partial;  ///< sorted

  bool Uses(int axis) const;
  /// "P(('fsdp', 'sp'), 'tp') partial{tp}" against the mesh's names.
  std::string ToString(const Mesh& mesh) const;
  friend bool operator==(const DistSpec&, const DistSpec&) = default;
};

/// A replicated spec of `rank`.
DistSpec ReplicatedSpec(int rank);

/// The DistSpec of a PartitionSpec on a rank-`rank` tensor (missing entries are None). BadInput when an
/// axis is unknown or repeated.
StatusOr<DistSpec> SpecFromPartition(const PartitionSpec& spec, int rank, const Mesh& mesh);

/// Device geometry of a mesh: coordinates, block numbers, collective groups, and the devices this
/// process runs: all of them in the in-process engine, a contiguous range of the row-major device order
/// under MPI (kernels/engine.h). A DistTensor's `local` holds one block per device of that range.
class MeshGeometry {
 public:
  explicit MeshGeometry(const Mesh& mesh);
  /// Only devices [first, first + count) run here. REQUIRES: the range lies inside the mesh.
  MeshGeometry(const Mesh& mesh, int64_t first, int64_t count);
  const Mesh& mesh() const { return mesh_; }
  int64_t devices() const { return devices_; }
  int64_t first_local() const { return first_local_; }
  int64_t local_devices() const { return local_devices_; }
  /// The global id of local block `i`.
  int64_t LocalDevice(size_t i) const { return first_local_ + static_cast<int64_t>(i); }
  bool Owns(int64_t device) const { return device >= first_local_ && device < first_local_ + local_devices_; }
  /// Every device runs in this process.
  bool whole() const { return local_devices_ == devices_; }
  int64_t AxisSize(int axis) const { return mesh_.shape[static_cast<size_t>(axis)]; }
  int64_t Coord(int64_t device, int axis) const {
    const size_t a = static_cast<size_t>(axis);
    return device / strides_[a] % mesh_.shape[a];
  }
  /// Product of the sizes of `axes`.
  int64_t Tiles(const std::vector<int>& axes) const;
  /// Mixed-radix number of the device's coordinates on `axes`, the first major.
  int64_t BlockIndex(int64_t device, const std::vector<int>& axes) const;
  /// The range of a dim of `size` cut by `axes` that `device` holds. REQUIRES: Tiles(axes) divides size.
  Range DimRange(int64_t device, int64_t size, const std::vector<int>& axes) const;
  /// Every device's group over `axes`: the devices equal to it on all other axes, ordered by
  /// BlockIndex(·, axes). Groups are listed once each, by their first member.
  std::vector<std::vector<int64_t>> Groups(const std::vector<int>& axes) const;

 private:
  Mesh mesh_;
  int64_t devices_ = 1;
  int64_t first_local_ = 0, local_devices_ = 0;
  /// Row-major: a device's coordinate on axis a is device / strides_[a] % shape[a]. Computed, not
  /// tabulated: a table of every device's coordinates costs 16,384 allocations per dry run on a large
  /// mesh (suggest builds thousands of geometries).
  std::vector<int64_t> strides_;
};

struct DistTensor {
  Dims shape;  ///< global shape
  DistSpec spec;
  std::vector<HostTensor> local;  ///< one per device
  /// The LiveMeter charge of these blocks (shared by copies), when an SPMD op with a meter made them.
  std::shared_ptr<const void> live;
  /// A model parameter (or a reshard of one), not an activation: its collectives recur in the
  /// backward pass as the step-time model counts them (step/step_time.h).
  bool parameter = false;
  /// Which value these blocks hold: copies share it, every SPMD op's result gets a new one; 0 = not
  /// known (a tensor built outside kernels/spmd.h). Lets identical reshards of one value run once.
  uint64_t value_id = 0;

  int rank() const { return static_cast<int>(shape.size()); }
  /// The box device `d` holds. REQUIRES: even layout.
  std::vector<Range> BoxOf(const MeshGeometry& geo, int64_t device) const;
};

/// True when every sharded dim is divisible by its tiles.
bool EvenlyDivisible(const Dims& shape, const DistSpec& spec, const MeshGeometry& geo);

/// Cuts a full tensor into the block of every device of this process (no communication: the initial
/// placement).
DistTensor Distribute(const HostTensor& full, const DistSpec& spec, const MeshGeometry& geo);

/// Reassembles the full tensor from the blocks of replica 0 (a probe for comparisons, not a
/// collective: it is never accounted). REQUIRES: spec.partial empty, geo.whole().
HostTensor Assemble(const DistTensor& t, const MeshGeometry& geo);

}  // namespace easyplan::kernels

#endif  // EASYPLAN_KERNELS_DIST_TENSOR_H_
