#ifndef EASYPLAN_KERNELS_STAGE_MESH_H_
#define EASYPLAN_KERNELS_STAGE_MESH_H_

// The devices of one pipeline stage (docs/PIPELINE.md): the mesh's devices at one coordinate of its pp
// axis, numbered as the mesh without that axis numbers its devices (row-major, the last axis fastest).
// Every stage's devices form the same mesh, and no partition spec names pp, so device i of one stage
// and device i of the next hold the same block of a tensor laid out alike: a stage boundary is a send
// from each device to its counterpart, as Megatron-LM's pipeline ranks with the same tensor- and
// data-parallel ranks exchange activations (megatron/core/pipeline_parallel/p2p_communication.py).
//
//   mesh pp=2, tp=2: devices 0 1 | 2 3     stage 0 = devices 0, 1; stage 1 = devices 2, 3
//   mesh tp=2, pp=2: devices 0 2 | 1 3     stage 0 = devices 0, 2; stage 1 = devices 1, 3

#include <cstdint>

#include "core/mesh.h"
#include "kernels/dist_tensor.h"

namespace easyplan::kernels {

/// `mesh` without its axis `pp_axis` (and that axis's DCN factor).
Mesh StageMesh(const Mesh& mesh, int pp_axis);

/// The whole mesh's id of device `device` of stage `stage`.
int64_t DeviceOfStage(const Mesh& mesh, int pp_axis, int64_t stage, int64_t device);

/// A run of a stage's devices, in the stage's own numbering.
struct StageRange {
  int64_t first = 0, count = 0;
  bool Contains(int64_t device) const { return device >= first && device < first + count; }
};

/// The devices of stage `stage` among the whole mesh's devices [first, first + count) (the devices a
/// process runs), as a range of the stage's ids; count 0 when there are none. REQUIRES: they are
/// contiguous in the stage's numbering, as they are for every rank block of kernels/mpi_launch.h (a
/// block is whole trailing axes times a range of the next one, and so is its part on one stage).
StageRange StageDevicesIn(const Mesh& mesh, int pp_axis, int64_t stage, int64_t first, int64_t count);

/// The block every device holds of a tensor of `shape` laid out by `spec` on `geo`'s mesh. REQUIRES:
/// the layout is even.
Dims BlockShape(const Dims& shape, const DistSpec& spec, const MeshGeometry& geo);

}  // namespace easyplan::kernels

#endif  // EASYPLAN_KERNELS_STAGE_MESH_H_
