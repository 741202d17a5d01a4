#ifndef EASYPLAN_API_TOPOLOGY_LINES_H_
#define EASYPLAN_API_TOPOLOGY_LINES_H_

// What cost says of the TPU slice a step was priced on (docs/COST.md, "The topology"): the torus, where
// its dims came from, its wraparound, and where the mesh's axes lie on it. Printed as "assumed ..."
// lines, and the JSON's `topology`.

#include <string>
#include <vector>

#include "core/mesh.h"
#include "step/hardware.h"
#include "step/step_time.h"

namespace easyplan::api {

/// "the tpu-v5p slice of 128 chips is a 2x8x8 torus (as given), with no wraparound", then "the mesh laid
/// on the torus as jax mesh_utils.create_device_mesh lays it: fsdp=16 over 2x8, tp=8 over 8" (or the
/// ring order, or row-major where mesh_utils has no layout). `mesh` is the step's.
std::vector<std::string> TopologyLines(const step::SliceTopology& slice, const Mesh& mesh,
                                       const step::HardwareProfile& hardware);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_TOPOLOGY_LINES_H_
