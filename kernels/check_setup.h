#ifndef EASYPLAN_KERNELS_CHECK_SETUP_H_
#define EASYPLAN_KERNELS_CHECK_SETUP_H_

// Internal to kernels: what every CPU-reference check run prepares before it places a parameter, the same
// for the plain run (kernels/numeric_check.cc) and the pipelined one (kernels/pipeline_check.cc): the
// engine and this process's place in it, the one-device mesh of the unsharded reference, the token ids
// laid out as EasyDeL constrains them, and the reference forward over them (docs/CHECK.md).

#include <memory>
#include <vector>

#include "core/mesh.h"
#include "core/status.h"
#include "kernels/dist_tensor.h"
#include "kernels/engine.h"
#include "kernels/host_tensor.h"
#include "kernels/model.h"
#include "kernels/numeric_check.h"
#include "kernels/transport.h"
#include "planner/plan.h"

namespace easyplan::kernels::internal {

/// The whole mesh with every axis of size 1: the unsharded reference's one device.
Mesh OneDeviceMesh(const Mesh& mesh);

/// A check run's engine and this process's devices of the plan's mesh.
struct CheckRun {
  std::unique_ptr<Engine> in_process;  ///< owns the engine when the options name none
  Engine* engine = nullptr;
  std::unique_ptr<Transport> transport;  ///< this process's devices, connected to the others'
  MeshGeometry reference_geo;            ///< OneDeviceMesh(plan.mesh), every device of it
  bool root = true;                      ///< this process reports (holds every device's results)
  bool distributed = false;              ///< compared with an in-process rerun (Engine::distributed)

  explicit CheckRun(const Mesh& mesh) : reference_geo(OneDeviceMesh(mesh)) {}
  const MeshGeometry& geo() const { return transport->geo(); }
};

/// Starts the run of `plan`'s check on `options.engine` (in process when null): sets the report's device
/// count and parameter bytes, then connects. BadInput when the simulation would not fit
/// (CheckSimulationFits) or the engine cannot split the mesh.
StatusOr<CheckRun> StartCheckRun(const planner::Plan& plan, const NumericOptions& options, NumericReport* report);

/// The token ids [batch, seq] and their spec over the mesh of `geo`.
struct CheckInputs {
  HostTensor ids;
  DistSpec spec;
};

/// The token ids under `seed`, laid out as EasyDeL constrains them (its batch and sequence axes) on the
/// mesh of `geo`; sets the report's batch and sequence. BadInput when that layout does not divide them or
/// the model's MoE block cannot run on the mesh (CheckMoeBlock).
StatusOr<CheckInputs> PrepareInputs(const ModelDesc& model, const MeshGeometry& geo, uint64_t seed,
                                    NumericReport* report);

/// The unsharded reference forward over `ids` (laid out on `mesh` as EasyDeL constrains them) on the one
/// device of `reference_geo`, its collectives uninjected.
std::vector<Activation> ReferenceForward(const ModelDesc& model, const Mesh& mesh, const MeshGeometry& reference_geo,
                                         const ParamLookup& params, const HostTensor& ids);

}  // namespace easyplan::kernels::internal

#endif  // EASYPLAN_KERNELS_CHECK_SETUP_H_
