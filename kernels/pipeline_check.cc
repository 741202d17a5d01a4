#include "kernels/pipeline_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <unordered_map>

#include "core/dtype.h"
#include "kernels/check_setup.h"
#include "kernels/numeric_check_parts.h"
#include "kernels/pipeline_forward.h"
#include "kernels/stage_mesh.h"
#include "planner/pipeline.h"

namespace easyplan::kernels::internal {
namespace {

using ParamMap = std::unordered_map<std::string, DistTensor>;

// Where the stages are: the mesh, its pp axis, and one stage's devices (every stage's mesh is the same).
struct Stages {
  Stages(const Mesh& whole, int axis, int64_t stages)
      : mesh(whole), pp_axis(axis), count(stages), geo(StageMesh(whole, axis)), stride(whole.Stride(axis)) {}
  const Mesh& mesh;
  int pp_axis;
  int64_t count;
  MeshGeometry geo;    ///< one stage's mesh, every device of it
  int64_t stride = 1;  ///< the devices one step of the pp axis spans

  /// The whole mesh's id of stage `stage`'s device `device`.
  int64_t Device(int64_t stage, int64_t device) const { return DeviceOfStage(mesh, pp_axis, stage, device); }
  /// The stage of a device of the whole mesh, and its id in the stage.
  int64_t StageOf(int64_t device) const { return device / stride % count; }
  int64_t IdOf(int64_t device) const { return device / (count * stride) * stride + device % stride; }
};

// Each stage's parameters as the plan places them: this process's devices of the stage, every device's
// on the root of a distributed run (its in-process rerun), and the root's unsharded reference.
struct StagedParams {
  std::vector<ParamMap> sharded, sharded_all;
  ParamMap reference;
  /// What a stage's lookup needs for a tensor the stage does not hold: its shape and spec.
  std::unordered_map<std::string, std::pair<Dims, DistSpec>> layouts;
  /// The stages holding each tensor, for the message when another stage reads it.
  std::unordered_map<std::string, std::vector<int64_t>> held_on;
  bool shapes_ok = true;
};

// Where an injected plan fault goes: the first tensor sharded on its stage, on that stage's devices.
struct StageFault {
  int64_t offset_device = -1, corrupt_device = -1;  ///< whole-mesh ids
  std::optional<planner::TensorLayout> mutated;
  bool done = false;
};

StageFault FaultFor(const TensorEntry& tensor, const planner::ParamPlan& p, const DistSpec& spec,
                    const planner::LayoutGroup& group, const Stages& stages, Injection injection) {
  StageFault fault;
  if (!IsSharded(spec, stages.geo)) return fault;
  int64_t stage = 0;
  while (stage < stages.count && !group.stages.On(stage)) ++stage;
  if (injection == Injection::kCorruptShard) {
    fault.corrupt_device = stages.Device(stage, stages.geo.devices() - 1);
    fault.done = true;
  } else if (injection == Injection::kOffsetBlock) {
    fault.offset_device = stages.Device(stage, 0);
    fault.done = true;
  } else if (injection == Injection::kWrongDim || injection == Injection::kSwapTupleOrder) {
    fault.mutated = MutatedLayout(tensor.shape, p.effective, stages.mesh, injection);
    fault.done = fault.mutated.has_value();
  }
  return fault;
}

// Cuts every parameter into the shards the plan gives the devices of each stage holding it (through an
// injected fault when asked) and checks each against its spec. `mine[s]`: this process's devices of
// stage s.
StatusOr<StagedParams> PlaceStageParameters(const planner::Plan& plan, const ParamTree& tree,
                                            const NumericOptions& options, const Stages& stages,
                                            const std::vector<StageRange>& mine, const MeshGeometry& geo1, bool root,
                                            bool distributed, NumericReport* report) {
  const Mesh stage_mesh = stages.geo.mesh();
  StagedParams placed;
  placed.sharded.resize(static_cast<size_t>(stages.count));
  placed.sharded_all.resize(static_cast<size_t>(stages.count));
  bool injected = options.injection == Injection::kNone || options.injection == Injection::kDropAllReduce ||
                  options.injection == Injection::kDropStageSend;
  if (root) report->measured_params.assign(static_cast<size_t>(plan.mesh.NumDevices()), 0);
  EP_RETURN_IF_ERROR(ForEachCheckedParameter(plan, tree, options.seed, report, [&](const CheckedParameter& param) {
    const planner::ParamPlan& p = param.plan;
    const TensorEntry& tensor = param.tensor;
    const planner::LayoutGroup& group = param.group;
    const Dims& dims = param.dims;
    const HostTensor& w = param.weight;
    EP_ASSIGN_OR_RETURN(const DistSpec spec, SpecFromPartition(p.effective, tensor.shape.rank(), stage_mesh));
    EP_ASSIGN_OR_RETURN(const DistSpec whole_spec, SpecFromPartition(p.effective, tensor.shape.rank(), plan.mesh));
    placed.layouts.emplace(tensor.name, std::make_pair(dims, spec));
    StageFault fault;
    if (!injected) {
      fault = FaultFor(tensor, p, spec, group, stages, options.injection);
      injected = fault.done;
    }
    const planner::TensorLayout& layout = fault.mutated ? *fault.mutated : group.layout;
    int64_t param_errors = 0;
    for (int64_t s = 0; s < stages.count; ++s) {
      if (!group.stages.On(s)) continue;
      placed.held_on[tensor.name].push_back(s);
      DistTensor here{dims, spec, {}};  // this process's devices of the stage
      DistTensor all{dims, spec, {}};   // every device of it, on the root of a distributed run
      for (int64_t i = 0; i < stages.geo.devices(); ++i) {
        const int64_t d = stages.Device(s, i);
        std::vector<planner::Range> box = layout.SliceOf(d);
        if (d == fault.offset_device) OffsetBlock(spec, stages.geo, &box);
        const std::vector<Range> want_box = here.BoxOf(stages.geo, i);
        placed.shapes_ok = placed.shapes_ok && SameExtents(box, want_box);
        const bool owned = mine[static_cast<size_t>(s)].Contains(i);
        if (root && !group.HeldBy(d)) {  // the group's stages and its per-device view must agree
          ShardError error{tensor.name, d};
          error.message =
              fmt::format("the plan puts it on pipeline stage {}, but not on device {} of that stage", s, d);
          RecordShardError(std::move(error), &param_errors, report);
        }
        if (!root && !owned) continue;
        HostTensor local = SliceBox(w, std::vector<Range>(box.begin(), box.end()));
        if (d == fault.corrupt_device && local.size() > 0) local.data[0] += 1.0;
        ShardError error = CheckShard(tensor, p, d, box, want_box, w, local, root);
        if (root && !error.message.empty()) RecordShardError(std::move(error), &param_errors, report);
        if (root) {
          report->measured_params[static_cast<size_t>(d)] +=
              ByteSize(local.size(), DTypeBits(tensor.dtype)).value_or(0);
        }
        if (owned) here.local.push_back(local);
        if (root && distributed) all.local.push_back(std::move(local));
      }
      placed.sharded[static_cast<size_t>(s)].emplace(tensor.name, std::move(here));
      if (root && distributed) placed.sharded_all[static_cast<size_t>(s)].emplace(tensor.name, std::move(all));
    }
    if (root) placed.reference.emplace(tensor.name, Distribute(w, whole_spec, geo1));
    return Status();
  }));
  return placed;
}

// Stage `stage`'s parameters, for its devices [range] of this process. A tensor the stage does not hold
// but its layers read is a shard error on the stage (when `errors` is given: the runs the root reports),
// and reads as zeros so the forward runs on and the outputs show it too.
class StageLookup {
 public:
  StageLookup(const StagedParams& placed, const ParamMap& held, const Stages& stages, int64_t stage, StageRange range,
              NumericReport* errors)
      : placed_(placed), held_(held), stages_(stages), stage_(stage), range_(range), errors_(errors) {}

  const DistTensor& operator()(const std::string& name) {
    if (auto it = held_.find(name); it != held_.end()) return it->second;
    if (auto it = missing_.find(name); it != missing_.end()) return it->second;
    auto layout = placed_.layouts.find(name);
    EP_CHECK(layout != placed_.layouts.end(), "the model needs tensor '" + name + "', which the tree lacks");
    const auto& [dims, spec] = layout->second;
    if (errors_ != nullptr) {
      const auto on = placed_.held_on.find(name);
      const std::string where =
          on == placed_.held_on.end() ? "no stage" : fmt::format("stage {} only", fmt::join(on->second, " and "));
      std::vector<int64_t> devices;
      for (int64_t i = 0; i < stages_.geo.devices(); ++i) devices.push_back(stages_.Device(stage_, i));
      const std::string held_by = devices.size() == 1 ? fmt::format("device {}", devices[0])
                                                      : fmt::format("devices {}", fmt::join(devices, ", "));
      ++errors_->shard_errors_total;
      if (errors_->shard_errors.size() < 20) {
        ShardError error{name, devices[0]};
        error.message = fmt::format("pipeline stage {} ({}) runs a layer that reads it, but the plan puts it on {}",
                                    stage_, held_by, where);
        errors_->shard_errors.push_back(std::move(error));
      }
    }
    const MeshGeometry local(stages_.geo.mesh(), range_.first, range_.count);
    return missing_.emplace(name, Distribute(HostTensor(dims), spec, local)).first->second;
  }

 private:
  const StagedParams& placed_;
  const ParamMap& held_;
  const Stages& stages_;
  int64_t stage_;
  StageRange range_;
  NumericReport* errors_;
  std::unordered_map<std::string, DistTensor> missing_;
};

// Per stage, a ParamLookup over `maps[s]` for the devices `ranges[s]`; the lookups own their state.
std::vector<ParamLookup> StageLookups(const StagedParams& placed, const std::vector<ParamMap>& maps,
                                      const Stages& stages, const std::vector<StageRange>& ranges,
                                      NumericReport* errors) {
  std::vector<ParamLookup> lookups;
  for (int64_t s = 0; s < stages.count; ++s) {
    auto lookup = std::make_shared<StageLookup>(placed, maps[static_cast<size_t>(s)], stages, s,
                                                ranges[static_cast<size_t>(s)], errors);
    lookups.emplace_back([lookup](const std::string& name) -> const DistTensor& { return (*lookup)(name); });
  }
  return lookups;
}

// The hash of the records a process running `runs` stages makes: those of its stages, every stage
// boundary (each process takes part in every send/recv call, sending or receiving or neither), and the
// drops its stages make.
int64_t StageLogHash(const CommLog& log, const std::vector<bool>& runs) {
  std::string text = fmt::format("{},{}", runs[0] ? log.dropped_all_reduces : 0, log.dropped_sends);
  for (const CommRecord& r : log.records) {
    if (r.kind == CollectiveKind::kSendRecv || (r.stage >= 0 && runs[static_cast<size_t>(r.stage)])) {
      text += RecordKey(r);
    }
  }
  return static_cast<int64_t>(Fnv1a(text) >> 1);
}

// The stages the process running `device` runs: those of its block of `per_process` devices.
std::vector<bool> StagesOfProcess(const Stages& stages, int64_t device, int64_t per_process) {
  std::vector<bool> runs(static_cast<size_t>(stages.count), false);
  const int64_t first = device / per_process * per_process;
  for (int64_t d = first; d < first + per_process; ++d) runs[static_cast<size_t>(stages.StageOf(d))] = true;
  return runs;
}

// Every device's block of each output, on the root, as the stage's tensors (devices in the stage's
// order); elsewhere only their shapes and specs. A probe: the off-stage devices send zeros.
std::vector<DistTensor> GatherOutputs(const std::vector<StageActivation>& got, const Stages& stages,
                                      const std::vector<StageRange>& mine, Transport& whole) {
  const MeshGeometry& geo = whole.geo();
  std::vector<DistTensor> outputs;
  for (const StageActivation& a : got) {
    const DistTensor& value = a.activation.value;
    const Dims block = BlockShape(value.shape, value.spec, stages.geo);
    std::vector<HostTensor> local;
    for (int64_t i = 0; i < geo.local_devices(); ++i) {
      const int64_t d = geo.LocalDevice(static_cast<size_t>(i));
      if (stages.StageOf(d) == a.stage) {
        local.push_back(value.local[static_cast<size_t>(stages.IdOf(d) - mine[static_cast<size_t>(a.stage)].first)]);
      } else {
        local.push_back(HostTensor(block));
      }
    }
    const std::vector<HostTensor> every = whole.GatherBlocks(local);
    DistTensor out{value.shape, value.spec, {}};
    for (int64_t i = 0; i < stages.geo.devices() && !every.empty(); ++i) {
      out.local.push_back(every[static_cast<size_t>(stages.Device(a.stage, i))]);
    }
    outputs.push_back(std::move(out));
  }
  return outputs;
}

}  // namespace

StatusOr<NumericReport> RunPipelinedCheck(const ModelDesc& model, const planner::Plan& plan, const ParamTree& tree,
                                          const NumericOptions& options) {
  const Mesh& mesh = plan.mesh;
  const std::optional<int> pp_axis = mesh.AxisIndex(std::string(planner::kPipelineAxis));
  EP_CHECK(pp_axis.has_value(), "a pipelined plan's mesh has its pp axis");
  const Stages stages(mesh, *pp_axis, plan.pipeline.stages);
  const PipelineRun pipeline{plan.pipeline, *pp_axis, options.injection};
  NumericReport report;
  EP_ASSIGN_OR_RETURN(const CheckRun run, StartCheckRun(plan, options, &report));
  const MeshGeometry& geo1 = run.reference_geo;
  const MeshGeometry& geo = run.geo();
  std::vector<StageRange> mine, every;
  for (int64_t s = 0; s < stages.count; ++s) {
    mine.push_back(StageDevicesIn(mesh, *pp_axis, s, geo.first_local(), geo.local_devices()));
    every.push_back({0, stages.geo.devices()});
  }
  EP_ASSIGN_OR_RETURN(const StagedParams placed, PlaceStageParameters(plan, tree, options, stages, mine, geo1, run.root,
                                                                      run.distributed, &report));

  // Inputs over one stage's mesh: every stage's devices take the same layout.
  EP_ASSIGN_OR_RETURN(const CheckInputs inputs, PrepareInputs(model, stages.geo, options.seed, &report));
  const HostTensor& ids = inputs.ids;
  std::vector<Activation> want;
  if (run.root) want = ReferenceForward(model, mesh, geo1, LookupIn(placed.reference), ids);
  if (!placed.shapes_ok) return report;

  // The stages this process runs; the root reports the stages' missing parameters from the run that holds
  // every stage (this one in process, its rerun under a distributed engine).
  const std::vector<ParamLookup> lookups =
      StageLookups(placed, placed.sharded, stages, mine, run.root && !run.distributed ? &report : nullptr);
  EP_ASSIGN_OR_RETURN(const std::vector<StageActivation> got,
                      PipelinedForward(model, pipeline, *run.transport, lookups, ids, &report.comm));
  report.executed = true;

  // Every process ran its stages' collectives and every boundary: each log hashes as the in-process
  // rerun's part for the same stages (checked on the root below).
  std::vector<bool> runs(static_cast<size_t>(stages.count), false);
  for (int64_t s = 0; s < stages.count; ++s) runs[static_cast<size_t>(s)] = mine[static_cast<size_t>(s)].count > 0;
  const std::vector<int64_t> log_hashes = run.transport->GatherValues(
      std::vector<int64_t>(static_cast<size_t>(geo.local_devices()), StageLogHash(report.comm, runs)));
  const std::vector<DistTensor> outputs = GatherOutputs(got, stages, mine, *run.transport);
  if (!run.root) return report;

  if (run.distributed) {
    // The in-process rerun of every stage over every device's shards: the engine's comparison, and the
    // whole pipeline's collectives for the report (each process's share of them checked by its hash).
    const std::unique_ptr<Transport> whole = MakeInProcessTransport(mesh);
    CommLog log;
    const std::vector<ParamLookup> all_lookups = StageLookups(placed, placed.sharded_all, stages, every, &report);
    EP_ASSIGN_OR_RETURN(const std::vector<StageActivation> expected,
                        PipelinedForward(model, pipeline, *whole, all_lookups, ids, &log));
    EngineComparison c;
    c.engine = run.engine->name();
    c.processes = run.engine->processes();
    c.devices_per_process = geo.local_devices();
    c.records = ForwardRecords(log);
    for (size_t d = 0; d < log_hashes.size() && c.comm_difference.empty(); ++d) {
      const std::vector<bool> its = StagesOfProcess(stages, static_cast<int64_t>(d), geo.local_devices());
      if (log_hashes[d] != StageLogHash(log, its)) {
        c.comm_difference = fmt::format(
            "the process running device {} ran other collectives than the in-process engine on its stages", d);
      }
    }
    double scale = 1;
    for (size_t i = 0; i < expected.size() && i < outputs.size(); ++i) {
      internal::AddEngineDifference(expected[i].activation.value, outputs[i], c, scale);
    }
    c.abs_tol = 1e-9 * scale;
    report.engine = c;
    report.comm = std::move(log);
  }
  for (size_t i = 0; i < got.size(); ++i) {
    auto it =
        std::find_if(want.begin(), want.end(), [&](const Activation& a) { return a.name == got[i].activation.name; });
    if (it == want.end()) return Status::Internal("the reference forward has no " + got[i].activation.name);
    Comparison c = CompareOutput(*it, outputs[i], stages.geo, geo1, stages.geo.devices());
    if (c.device >= 0) c.device = stages.Device(got[i].stage, c.device);
    report.comparisons.push_back(std::move(c));
  }
  return report;
}

}  // namespace easyplan::kernels::internal
