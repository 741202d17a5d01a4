#ifndef EASYPLAN_STEP_MATMUL_TILING_H_
#define EASYPLAN_STEP_MATMUL_TILING_H_

// Matmul efficiency by shape (docs/COST.md, "Matmul efficiency by shape"). A profile's matmul efficiency
// is one measurement at one large shape (stas00/ml-engineering's MAMF for GPUs, JAX's Pallas TPU matmul
// guide for TPUs). A matmul of another per-device shape wastes part of the matrix units the way the
// hardware runs it:
//  - tile quantization: each dim is padded to a whole tile (NVIDIA, "Matrix Multiplication Background
//    User's Guide", Dimension Quantization Effects: a thread block computes a whole output tile; Cloud
//    TPU performance guide, Padding: XLA pads a matrix to whole 8 x 128 chunks, the MXU multiplies
//    [8, 128] x [128, 128] blocks, [8, 256] x [256, 256] on v6e);
//  - wave quantization (GPUs): the output tiles run one per SM, in waves of `units` tiles, and a partial
//    last wave takes as long as a full one.
// cuBLAS takes the tile with the least waste among those whose grid still fills one wave of the SMs (the
// guide: it takes narrower tiles to reduce tile quantization, and small tiles only when a GEMM lacks the
// parallelism for large ones); a matmul too small for any tile to fill a wave has its k split over the
// idle SMs (the guide: the libraries tile along k when m and n are small). Every tile is credited the
// same rate per SM: the guide's larger tiles are more efficient, but it does not say by how much. The
// efficiency is the profile's times this utilization over the utilization of the shape the profile's
// efficiency was measured at, at most the profile's: the measured shape runs at exactly the measured
// efficiency, and no shape faster (MAMF is the best of a search over shapes).

#include <array>
#include <cstdint>
#include <string>

#include "step/hardware.h"

namespace easyplan::step {

/// One matmul on one device: `batch` independent [m, k] x [k, n] products.
struct MatmulShape {
  int64_t batch = 1, m = 1, n = 1, k = 1;
};

/// Of the work `tile` issues for `shape` (padded dims, and with `units` > 0 whole waves of SMs), the share
/// that is the matmul's own: 1 when every dim is a whole number of tiles and the tiles fill whole waves.
/// With `splits` > 1 each output tile is computed in that many slices of k, each a unit of a wave.
double TileUtilization(const std::array<int64_t, 3>& tile, int64_t units, const MatmulShape& shape, int64_t splits = 1);

/// The utilization of the tile the kernel library takes for `shape` (the rule above).
double ShapeUtilization(const step::MatmulTiling& tiling, const MatmulShape& shape);

/// The fraction of the peak a matmul of `shape` reaches on `hw`: the profile's matmul efficiency scaled
/// by the shape's utilization over the measured shape's (at most 1); the matmul efficiency itself where
/// the profile has no tiling.
double ShapeEfficiency(const step::HardwareProfile& hw, const MatmulShape& shape);

/// What `cost` and `suggest` print as an assumption: how matmuls are priced on `hw`. `detailed` adds the
/// measured shape, every tile and the SM count (the JSON and --verbose); without it the line fits a terminal.
std::string MatmulEfficiencyAssumption(const step::HardwareProfile& hw, bool detailed = true);

}  // namespace easyplan::step

#endif  // EASYPLAN_STEP_MATMUL_TILING_H_
