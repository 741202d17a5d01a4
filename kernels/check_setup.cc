#include "kernels/check_setup.h"

#include <fmt/format.h>

#include "kernels/collectives.h"
#include "kernels/numeric_check_parts.h"
#include "kernels/spmd.h"

namespace easyplan::kernels::internal {

Mesh OneDeviceMesh(const Mesh& mesh) {
  Mesh one = mesh;
  for (int64_t& s : one.shape) s = 1;
  one.dcn_shape.clear();
  return one;
}

StatusOr<CheckRun> StartCheckRun(const planner::Plan& plan, const NumericOptions& options, NumericReport* report) {
  CheckRun run(plan.mesh);
  run.engine = options.engine;
  if (run.engine == nullptr) {
    run.in_process = MakeInProcessEngine();
    run.engine = run.in_process.get();
  }
  report->devices = plan.mesh.NumDevices();
  EP_ASSIGN_OR_RETURN(report->param_bytes, CheckSimulationFits(plan, options));
  EP_ASSIGN_OR_RETURN(run.transport, run.engine->Connect(plan.mesh));
  run.root = run.transport->root();
  run.distributed = run.engine->distributed();
  return run;
}

StatusOr<CheckInputs> PrepareInputs(const ModelDesc& model, const MeshGeometry& geo, uint64_t seed,
                                    NumericReport* report) {
  const Mesh& mesh = geo.mesh();
  CheckInputs inputs{{}, ActivationSpec(mesh, {model.axes.batch, model.axes.sequence})};
  report->batch = model.batch;
  report->seq = model.seq;
  if (!EvenlyDivisible({model.batch, model.seq}, inputs.spec, geo)) {
    return Status::BadInput({}, fmt::format("batch {} x sequence {} is not divisible by the activation layout {}",
                                            model.batch, model.seq, inputs.spec.ToString(mesh)));
  }
  EP_RETURN_IF_ERROR(CheckMoeBlock(model, mesh));
  inputs.ids = TokenIds(model, seed);
  return inputs;
}

std::vector<Activation> ReferenceForward(const ModelDesc& model, const Mesh& mesh, const MeshGeometry& reference_geo,
                                         const ParamLookup& params, const HostTensor& ids) {
  CommLog log;
  Collectives comm(reference_geo, model.bytes_per_element, &log, Injection::kNone);
  Spmd spmd(comm);
  const DistSpec spec = ActivationSpec(mesh, {model.axes.batch, model.axes.sequence});
  return Forward(model, spmd, params, Distribute(ids, spec, reference_geo));
}

}  // namespace easyplan::kernels::internal
