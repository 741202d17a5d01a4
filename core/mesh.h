#ifndef EASYPLAN_CORE_MESH_H_
#define EASYPLAN_CORE_MESH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace easyplan {

/// A logical device mesh as jax.sharding.Mesh sees it: named axes in mesh order and their sizes.
/// Device ids are positions in the row-major mesh array (device d has coordinates
/// Unravel(d)), as with `jax.make_mesh` on iota-ordered devices and torch's `init_device_mesh`.
/// For a hybrid (multi-slice) mesh, `dcn_shape[k]` slices make up axis k: the global coordinate is
/// dcn_index * (shape[k] / dcn_shape[k]) + ici_index, DCN major (jax create_hybrid_device_mesh).
struct Mesh {
  std::vector<std::string> axis_names;
  std::vector<int64_t> shape;      ///< global axis sizes, all >= 1
  std::vector<int64_t> dcn_shape;  ///< empty = single slice; else one factor per axis

  int rank() const { return static_cast<int>(shape.size()); }
  /// Product of the axis sizes (validated not to overflow when the mesh was built).
  int64_t NumDevices() const;
  /// Position of `name` in axis_names, or nullopt.
  std::optional<int> AxisIndex(const std::string& name) const;
  /// Mesh coordinates of device `device` (row-major, first axis slowest).
  std::vector<int64_t> Coordinates(int64_t device) const;
  /// How many device ids one step along `axis` spans (row-major): the product of the sizes after it.
  int64_t Stride(int axis) const;
  /// Slice (DCN granule) index of a device; 0 for single-slice meshes.
  int64_t SliceIndex(int64_t device) const;
  /// Each axis's size within one slice (ICI): its size over its --dcn factor (the sizes when single-slice).
  std::vector<int64_t> SliceShape() const;
  /// The strides of a slice's own devices: row-major over each axis's in-slice (ICI) size, the last axis
  /// fastest, as jax create_hybrid_device_mesh lays a slice out (the whole mesh when single-slice).
  std::vector<int64_t> SliceStrides() const;
  /// "dp=1, fsdp=8, ep=1, tp=4, sp=1".
  std::string ToString() const;

  friend bool operator==(const Mesh&, const Mesh&) = default;
};

}  // namespace easyplan

#endif  // EASYPLAN_CORE_MESH_H_
