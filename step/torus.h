#ifndef EASYPLAN_STEP_TORUS_H_
#define EASYPLAN_STEP_TORUS_H_

// A TPU slice's ICI torus as the step-time model sees it (docs/COST.md, "The topology"): the slice's dims
// (Cloud TPU's topology for its chip count, or as given), which dims wrap around (the profile's
// `wraparound` rule, from "How to Scale Your Model"), and how the mesh's axes lie on the dims, as jax's
// `mesh_utils.create_device_mesh` lays them (jax-ml/jax jax/_src/mesh_utils.py @ cec06d11,
// `_create_device_mesh_for_nd_torus` and, where no axis fits whole dims, its
// `_create_device_mesh_for_nd_torus_splitting_axes`, as MaxText's `allow_split_physical_axes=True` asks).

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "step/hardware.h"

namespace easyplan::step {

struct TorusSlice {
  std::vector<int64_t> dims;  ///< the slice's torus dims, in the order Cloud TPU writes them (4x4x8)
  std::vector<bool> wraps;    ///< per dim: wraparound links
  /// The chip count does not fix the shape (no Cloud TPU topology of that count): the most even
  /// factorization that fits the profile's torus is assumed, and cost says so.
  bool shape_assumed = false;
  bool shape_given = false;  ///< the dims were given (StepOptions::torus), not derived
  /// jax's ring order over a small v5e/v6e slice (`_v5e_create_device_mesh`: 2x2, 2x4, and 4x4 when
  /// one mesh axis holds all 16 chips): the devices in mesh order walk one closed ring of ICI links.
  bool ring_order = false;
  /// [dim][mesh axis]: the part of each mesh axis's in-slice size laid along each dim; the product over
  /// the dims is the axis's size, over the axes the dim's.
  std::vector<std::vector<int64_t>> assignment;
  /// No assignment jax would make (an axis size with a prime no dim has): every axis assumed on the
  /// first dims in row-major order, without wraparound.
  bool layout_assumed = false;
};

/// How a collective over some mesh axes uses the torus: the dims its group spans (each dim's links carry
/// an equal share), the bandwidth over one wrapped dim's it reaches, and the hops its ring walks.
struct TorusSpan {
  int dims = 0;
  /// Of the profile's `fast.bandwidth` (one dim with wraparound): the dims spanned times the slowest
  /// one's share, 1 with wraparound and 1/2 without (a ring that cannot close sends one way around).
  double bandwidth_factor = 1;
  int64_t hops = 0;  ///< over each dim spanned: half its length with wraparound, its length - 1 without
};

/// The torus dims Cloud TPU gives a slice of `chips` chips of `fast` (fast.torus's rank): from 2x2x1
/// (3D) or 1x1 (2D), the smallest dim doubled (the last of equals), which gives 2x2x2, 2x2x4, 2x4x4, 4x4x4,
/// 4x4x8, 4x8x8, ... and 2x2, 2x4, 4x4, 4x8, 8x8, 8x16, 16x16. Another count (not a power of two, or
/// past the torus) gets the most even factorization that fits the torus, with `shape_assumed` set
/// (full-cube profiles prefer whole 4x4x4 cubes).
std::vector<int64_t> SliceDims(const LinkDomain& fast, int64_t chips, bool* assumed);

/// Lays a slice's in-slice mesh axis sizes (`ici_shape`, mesh order: the last is the most
/// network-intensive) on its torus. `given`: the slice's dims as given (empty: SliceDims). BadInput when
/// `given` does not hold the slice's chips.
StatusOr<TorusSlice> LayOutSlice(const HardwareProfile& hw, const std::vector<int64_t>& ici_shape,
                                 const std::vector<int64_t>& given = {});

/// The dims and hops of a collective over the mesh axes `axes` (indices into the mesh) of a slice.
TorusSpan SpanOf(const TorusSlice& slice, const std::vector<int>& axes);

/// "4x4x8".
std::string DimsText(const std::vector<int64_t>& dims);

}  // namespace easyplan::step

#endif  // EASYPLAN_STEP_TORUS_H_
