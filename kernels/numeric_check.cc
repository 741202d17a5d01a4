#include "kernels/numeric_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <unordered_map>

#include "core/dtype.h"
#include "core/shape.h"
#include "kernels/check_setup.h"
#include "kernels/numeric_check_parts.h"
#include "kernels/pipeline_check.h"

namespace easyplan::kernels {

using internal::CheckedParameter;
using internal::CheckEvenLayout;
using internal::CheckInputs;
using internal::CheckRun;
using internal::CheckShard;
using internal::CheckSimulationFits;
using internal::CompareOutput;
using internal::FirstDifference;
using internal::Fnv1a;
using internal::ForEachCheckedParameter;
using internal::ForwardRecords;
using internal::HashOf;
using internal::IsSharded;
using internal::LookupIn;
using internal::MutatedLayout;
using internal::OffsetBlock;
using internal::PrepareInputs;
using internal::RecordShardError;
using internal::ReferenceForward;
using internal::SameExtents;
using internal::StartCheckRun;
using internal::TokenIds;
using internal::Uniform;

namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Reruns the sharded forward in process over every device's shards and compares the engine's outputs
// (every device's block, gathered) and collectives with it. Summation order is the one difference
// allowed: a distributed all-reduce adds each process's devices first, then MPI combines processes in
// its own order, where the in-process engine adds a group's members one by one.
EngineComparison CompareWithInProcess(const ModelDesc& model, const Mesh& mesh, const ParamLookup& params,
                                      const HostTensor& ids, const DistSpec& ids_spec, Injection injection,
                                      const std::vector<DistTensor>& outputs, const CommLog& engine_log) {
  const MeshGeometry whole(mesh);
  CommLog log;
  Collectives comm(whole, model.bytes_per_element, &log, injection);
  Spmd spmd(comm);
  const std::vector<Activation> expected = Forward(model, spmd, params, Distribute(ids, ids_spec, whole));
  EngineComparison c;
  c.records = ForwardRecords(log);
  c.comm_difference = FirstDifference(engine_log, log);
  double scale = 1;
  for (size_t i = 0; i < expected.size() && i < outputs.size(); ++i) {
    if (expected[i].compared) internal::AddEngineDifference(expected[i].value, outputs[i], c, scale);
  }
  c.abs_tol = 1e-9 * scale;
  return c;
}

}  // namespace

bool NumericReport::ok() const {
  if (shard_errors_total > 0 || !executed) return false;
  if (engine && !engine->ok()) return false;
  for (const Comparison& c : comparisons) {
    if (!c.ok) return false;
  }
  return true;
}

HostTensor MakeWeight(const std::string& name, const Dims& shape, uint64_t seed) {
  HostTensor t(shape);
  uint64_t state = Fnv1a(name) ^ (seed * 0x2545F4914F6CDD1Dull);
  const bool norm = shape.size() == 1 && (EndsWith(name, "/kernel") || EndsWith(name, "/scale"));
  const bool small = shape.size() == 1 && !norm;  // biases
  const double scale = shape.size() >= 2 && !EndsWith(name, "/embedding")
                           ? 1.0 / std::sqrt(static_cast<double>(shape[shape.size() - 2]))
                           : 1.0;
  for (double& v : t.data) {
    const double u = Uniform(&state);
    v = norm ? 1.0 + 0.1 * u : small ? 0.1 * u : scale * u;
  }
  return t;
}

namespace {

// The parameters as the plan places them: this process's shards, every device's on the root of a
// distributed run (to rerun the forward in process), and the root's unsharded reference.
struct Placement {
  std::unordered_map<std::string, DistTensor> sharded, sharded_all, reference;
  bool shapes_ok = true;  ///< every shard has the shape its spec gives (else the forward cannot run)
};

// Where an injected fault goes: the first sharded tensor gets it.
struct InjectedFault {
  bool done = false;
  int64_t offset_device = -1, corrupt_device = -1;
  std::optional<planner::TensorLayout> mutated;
};

InjectedFault InjectInto(const TensorEntry& tensor, const planner::ParamPlan& p, const DistSpec& spec,
                         const MeshGeometry& geo, const Mesh& mesh, Injection injection, int64_t devices) {
  InjectedFault fault;
  if (!IsSharded(spec, geo)) return fault;
  if (injection == Injection::kCorruptShard) {
    fault.corrupt_device = devices - 1;
    fault.done = true;
  } else if (injection == Injection::kOffsetBlock) {
    fault.offset_device = 0;
    fault.done = true;
  } else {
    fault.mutated = MutatedLayout(tensor.shape, p.effective, mesh, injection);
    fault.done = fault.mutated.has_value();
  }
  return fault;
}

// Cuts every parameter into the shards the plan's layout assigns (through an injected fault when asked)
// and checks each against its spec, recording shard errors and the measured parameter bytes in `report`.
StatusOr<Placement> PlaceParameters(const planner::Plan& plan, const ParamTree& tree, const NumericOptions& options,
                                    const MeshGeometry& geo, const MeshGeometry& geo1, bool root, bool distributed,
                                    NumericReport* report) {
  const Mesh& mesh = plan.mesh;
  const int64_t devices = mesh.NumDevices();
  Placement placement;
  bool injected = options.injection == Injection::kNone || options.injection == Injection::kDropAllReduce;
  if (root) report->measured_params.assign(static_cast<size_t>(devices), 0);
  EP_RETURN_IF_ERROR(ForEachCheckedParameter(plan, tree, options.seed, report, [&](const CheckedParameter& param) {
    const planner::ParamPlan& p = param.plan;
    const TensorEntry& tensor = param.tensor;
    const planner::LayoutGroup& group = param.group;
    const Dims& dims = param.dims;
    const HostTensor& w = param.weight;
    EP_ASSIGN_OR_RETURN(DistSpec spec, SpecFromPartition(p.effective, tensor.shape.rank(), mesh));
    InjectedFault fault;
    if (!injected) {
      fault = InjectInto(tensor, p, spec, geo, mesh, options.injection, devices);
      injected = fault.done;
    }
    const planner::TensorLayout& layout = fault.mutated ? *fault.mutated : group.layout;
    DistTensor placed{dims, spec, {}};  // this process's devices
    DistTensor all{dims, spec, {}};     // every device's, on the root of a distributed run
    int64_t param_errors = 0;
    for (int64_t d = 0; d < devices; ++d) {
      std::vector<planner::Range> box = layout.SliceOf(d);
      if (d == fault.offset_device) OffsetBlock(spec, geo, &box);
      const std::vector<Range> want_box = placed.BoxOf(geo, d);
      placement.shapes_ok = placement.shapes_ok && SameExtents(box, want_box);
      if (!root && !geo.Owns(d)) continue;
      HostTensor local = SliceBox(w, std::vector<Range>(box.begin(), box.end()));
      if (d == fault.corrupt_device && local.size() > 0) local.data[0] += 1.0;
      // Three messages per tensor, twenty in all; shapes on every process, values on the root.
      ShardError error = CheckShard(tensor, p, d, box, want_box, w, local, root);
      if (root && !error.message.empty()) RecordShardError(std::move(error), &param_errors, report);
      if (root) {
        report->measured_params[static_cast<size_t>(d)] += ByteSize(local.size(), DTypeBits(tensor.dtype)).value_or(0);
      }
      if (geo.Owns(d)) placed.local.push_back(local);
      if (root && distributed) all.local.push_back(std::move(local));
    }
    placement.sharded.emplace(tensor.name, std::move(placed));
    if (root && distributed) placement.sharded_all.emplace(tensor.name, std::move(all));
    if (root) placement.reference.emplace(tensor.name, Distribute(w, spec, geo1));
    return Status();
  }));
  return placement;
}

// The bytes this process's devices hold of the residual stream, the logits and the KV cache, gathered to
// every device's on the root, with the measured activation peak.
void MeasureActivations(const std::vector<Activation>& got, const ModelDesc& model, const MeshGeometry& geo,
                        const LiveMeter& meter, Transport& transport, NumericReport* report) {
  const size_t local = static_cast<size_t>(geo.local_devices());
  std::vector<int64_t> residual(local, 0), logits(local, 0), kv_cache(local, 0);
  for (const Activation& a : got) {
    std::vector<int64_t>& into = a.kind == Activation::Kind::kLogits  ? logits
                                 : a.kind == Activation::Kind::kCache ? kv_cache
                                                                      : residual;
    const int64_t element = a.bytes_per_element > 0 ? a.bytes_per_element : model.bytes_per_element;
    for (size_t d = 0; d < a.value.local.size(); ++d) into[d] += a.value.local[d].size() * element;
  }
  report->measured_activation_peak = transport.GatherValues(meter.marked());
  report->measured_residual = transport.GatherValues(residual);
  report->measured_logits = transport.GatherValues(logits);
  report->measured_kv_cache = transport.GatherValues(kv_cache);
}

}  // namespace

StatusOr<NumericReport> RunNumericCheck(const ModelDesc& model, const planner::Plan& plan, const ParamTree& tree,
                                        const NumericOptions& options) {
  if (plan.pipeline.pipelined()) return internal::RunPipelinedCheck(model, plan, tree, options);
  NumericReport report;
  const Mesh& mesh = plan.mesh;
  const int64_t devices = mesh.NumDevices();
  EP_ASSIGN_OR_RETURN(const CheckRun run, StartCheckRun(plan, options, &report));
  const MeshGeometry& geo1 = run.reference_geo;

  // This process's devices. The root cuts and checks every device's shards (and, on a distributed
  // engine, keeps them all to rerun the forward in process); the other processes cut only their own.
  const MeshGeometry& geo = run.geo();
  EP_ASSIGN_OR_RETURN(const Placement placement,
                      PlaceParameters(plan, tree, options, geo, geo1, run.root, run.distributed, &report));

  // Inputs: token ids [batch, seq], laid out as EasyDeL constrains them (batch and sequence axes).
  EP_ASSIGN_OR_RETURN(const CheckInputs inputs, PrepareInputs(model, geo, options.seed, &report));
  const HostTensor& ids = inputs.ids;
  const DistSpec& ids_spec = inputs.spec;
  std::vector<Activation> want;
  if (run.root) want = ReferenceForward(model, mesh, geo1, LookupIn(placement.reference), ids);
  if (!placement.shapes_ok) return report;

  Collectives comm(*run.transport, model.bytes_per_element, &report.comm, options.injection);
  Spmd spmd(comm);
  LiveMeter meter(geo.local_devices(), model.bytes_per_element);  // declared before `got`, whose tensors it charges
  spmd.set_meter(&meter);
  const std::vector<Activation> got = Forward(model, spmd, LookupIn(placement.sharded), spmd.Place(ids, ids_spec));
  spmd.set_meter(nullptr);
  report.executed = true;
  MeasureActivations(got, model, geo, meter, *run.transport, &report);

  // Every process must have run the same collectives: their logs hash alike.
  const size_t local = static_cast<size_t>(geo.local_devices());
  const std::vector<int64_t> log_hashes = run.transport->GatherValues(std::vector<int64_t>(local, HashOf(report.comm)));
  std::vector<DistTensor> outputs;  // every device's block of each output, on the root
  for (const Activation& a : got) {
    DistTensor out{a.value.shape, a.value.spec, {}};
    if (a.compared) out.local = run.transport->GatherBlocks(a.value.local);
    outputs.push_back(std::move(out));
  }
  if (!run.root) return report;
  for (size_t d = 0; d < log_hashes.size(); ++d) {
    if (log_hashes[d] != log_hashes[0]) {
      return Status::Internal(
          fmt::format("the {} engine's process running device {} ran different collectives "
                      "from the root's",
                      run.engine->name(), d));
    }
  }
  if (run.distributed) {
    report.engine = CompareWithInProcess(model, mesh, LookupIn(placement.sharded_all), ids, ids_spec, options.injection,
                                         outputs, report.comm);
    report.engine->engine = run.engine->name();
    report.engine->processes = run.engine->processes();
    report.engine->devices_per_process = geo.local_devices();
  }
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i].compared) report.comparisons.push_back(CompareOutput(want[i], outputs[i], geo, geo1, devices));
  }
  return report;
}

}  // namespace easyplan::kernels
