#include "kernels/numeric_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <unordered_map>

#include "core/checked_math.h"
#include "core/dtype.h"
#include "core/shape.h"

namespace easyplan::kernels {
namespace {

uint64_t SplitMix(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t Fnv1a(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// Uniform in [-1, 1).
double Uniform(uint64_t* state) { return static_cast<double>(SplitMix(state) >> 11) * 0x1.0p-52 - 1.0; }

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string IndexText(const Dims& index) { return "[" + fmt::format("{}", fmt::join(index, ", ")) + "]"; }

bool IsSharded(const DistSpec& spec, const MeshGeometry& geo) {
  for (const std::vector<int>& e : spec.dims) {
    if (geo.Tiles(e) > 1) return true;
  }
  return false;
}

// The layout an injection places parameter `spec` with instead of the plan's (nullopt: no change).
std::optional<planner::TensorLayout> MutatedLayout(const Shape& shape, const PartitionSpec& spec, const Mesh& mesh,
                                                   Injection injection) {
  std::vector<PartitionSpec::Entry> entries = spec.entries();
  entries.resize(static_cast<size_t>(shape.rank()));
  auto size_of = [&](const std::string& axis) { return mesh.shape[static_cast<size_t>(*mesh.AxisIndex(axis))]; };
  for (int d = 0; d < shape.rank(); ++d) {
    int64_t tiles = 1, big = 0;
    for (const std::string& axis : entries[static_cast<size_t>(d)]) {
      tiles *= size_of(axis);
      big += size_of(axis) > 1;
    }
    if (tiles <= 1) continue;
    if (injection == Injection::kSwapTupleOrder && big >= 2) {
      std::reverse(entries[static_cast<size_t>(d)].begin(), entries[static_cast<size_t>(d)].end());
    } else if (injection == Injection::kWrongDim) {
      bool moved = false;
      for (int other = 0; other < shape.rank() && !moved; ++other) {
        if (other == d || shape[other] % tiles != 0) continue;
        int64_t other_tiles = 1;
        for (const std::string& axis : entries[static_cast<size_t>(other)]) other_tiles *= size_of(axis);
        if (shape[d] % other_tiles != 0) continue;
        std::swap(entries[static_cast<size_t>(d)], entries[static_cast<size_t>(other)]);
        moved = true;
      }
      if (!moved) continue;
    } else {
      continue;
    }
    auto layout = planner::TensorLayout::Make(shape, PartitionSpec(entries), mesh, planner::UnevenMode::kError);
    if (layout.ok()) return std::move(*layout);
    return std::nullopt;
  }
  return std::nullopt;
}

// A routed collective's measured bytes are the busiest device's of the devices a process runs, which
// differ between a process and the whole mesh; what every engine agrees on is the expectation.
int64_t ComparedBytes(const CommRecord& r) { return r.expected_bytes >= 0 ? r.expected_bytes : r.bytes_per_device; }

int64_t HashOf(const CommLog& log) {
  std::string text = std::to_string(log.dropped_all_reduces);
  for (const CommRecord& r : log.records) {
    text += fmt::format("|{}|{}|{}|{}|{}|{}|{}|{}", static_cast<int>(r.kind), r.scope, r.op, r.tensor_spec,
                        r.group_size, ComparedBytes(r), r.parameter, fmt::join(r.axes, ","));
  }
  return static_cast<int64_t>(Fnv1a(text) >> 1);
}

std::string RecordText(const CommRecord& r) {
  return fmt::format("{} in {} ({}): {} over a group of {}, {} bytes per device", CollectiveName(r.kind), r.scope, r.op,
                     r.tensor_spec, r.group_size, r.bytes_per_device);
}

// The first difference between two engines' collectives ("" when none).
std::string FirstDifference(const CommLog& engine, const CommLog& in_process) {
  const size_t n = std::min(engine.records.size(), in_process.records.size());
  for (size_t i = 0; i < n; ++i) {
    const CommRecord& a = engine.records[i];
    const CommRecord& b = in_process.records[i];
    if (a.kind != b.kind || a.scope != b.scope || a.op != b.op || a.tensor_spec != b.tensor_spec ||
        a.group_size != b.group_size || ComparedBytes(a) != ComparedBytes(b) || a.parameter != b.parameter ||
        a.axes != b.axes) {
      return fmt::format("collective {}: {} here, {} in process", i + 1, RecordText(a), RecordText(b));
    }
  }
  if (engine.records.size() != in_process.records.size()) {
    return fmt::format("{} collectives here, {} in process", engine.records.size(), in_process.records.size());
  }
  if (engine.dropped_all_reduces != in_process.dropped_all_reduces) return "a different number of dropped all-reduces";
  return "";
}

// The normalized MSE and largest error of an output against its expected values, summed over every
// device's block (so a replicated block weighs the same in both sums).
struct ErrorSum {
  double err2 = 0, ref2 = 0, max_abs = 0;
  /// Adds one element; returns |got - want|.
  double Add(double got, double want) {
    const double diff = std::abs(got - want);
    err2 += diff * diff;
    ref2 += want * want;
    max_abs = std::max(max_abs, diff);
    return diff;
  }
  double nmse() const { return ref2 > 0 ? err2 / ref2 : err2; }
};

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
  c.records = static_cast<int64_t>(std::count_if(log.records.begin(), log.records.end(), [](const CommRecord& r) {
    return r.backward != CommRecord::Backward::kOnly;
  }));
  c.comm_difference = FirstDifference(engine_log, log);
  double scale = 1;
  for (size_t i = 0; i < expected.size() && i < outputs.size(); ++i) {
    if (!expected[i].compared) continue;
    ++c.outputs;
    ErrorSum sum;
    for (size_t d = 0; d < expected[i].value.local.size(); ++d) {
      const HostTensor& want = expected[i].value.local[d];
      const HostTensor& got = outputs[i].local[d];
      for (size_t e = 0; e < want.data.size(); ++e) {
        sum.Add(got.data[e], want.data[e]);
        scale = std::max(scale, std::abs(want.data[e]));
      }
    }
    c.max_abs_diff = std::max(c.max_abs_diff, sum.max_abs);
    c.max_nmse = std::max(c.max_nmse, sum.nmse());
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

// The simulation's bounds: the device cap, then every device's shards plus the reference copy in f64
// within max_bytes. Returns the parameters' bytes.
StatusOr<int64_t> CheckSimulationFits(const planner::Plan& plan, const NumericOptions& options) {
  const int64_t devices = plan.mesh.NumDevices();
  if (devices > options.max_devices) {
    return Status::BadInput({},
                            fmt::format("the numeric check simulates at most {} devices; this mesh has {} ({})",
                                        options.max_devices, devices, plan.mesh.ToString()),
                            {"use --level layout for larger meshes"});
  }
  int64_t elements = 0;
  for (const planner::ParamPlan& p : plan.params) {
    const planner::LayoutGroup& group = plan.groups[static_cast<size_t>(p.group)];
    const std::optional<int64_t> full = group.layout.shape().NumElements();
    const std::optional<int64_t> shard = group.layout.shard_shape().NumElements();
    const std::optional<int64_t> shards = shard ? CheckedMul(*shard, devices) : std::nullopt;
    const std::optional<int64_t> sum = full && shards ? CheckedAdd(*full, *shards) : std::nullopt;
    const std::optional<int64_t> total = sum ? CheckedAdd(elements, *sum) : std::nullopt;
    elements = total.value_or(INT64_MAX);
    if (elements > options.max_bytes / 8) {
      return Status::BadInput({},
                              fmt::format("the numeric check would need more than {} bytes of host memory for the "
                                          "parameters of {} simulated devices",
                                          options.max_bytes, devices),
                              {"the derived model is not tiny enough; use --level layout"});
    }
  }
  return elements * 8;
}

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

// Device d's shard against the slice the effective spec names: its extent on every process, its values
// on the root. Returns the error ("" message when it agrees).
ShardError CheckShard(const TensorEntry& tensor, const planner::ParamPlan& p, int64_t d,
                      const std::vector<planner::Range>& box, const std::vector<Range>& want_box, const HostTensor& w,
                      const HostTensor& local, bool root) {
  Dims got_extent, want_extent;
  for (const planner::Range& r : box) got_extent.push_back(r.second - r.first);
  for (const Range& r : want_box) want_extent.push_back(r.second - r.first);
  ShardError error{tensor.name, d};
  if (got_extent != want_extent) {
    error.message = fmt::format("device {} holds a shard of shape [{}], but {} gives it [{}]", d,
                                fmt::join(got_extent, ", "), p.effective.ToString(), fmt::join(want_extent, ", "));
    return error;
  }
  if (!root) return error;
  const HostTensor want = SliceBox(w, want_box);
  for (int64_t i = 0; i < want.size(); ++i) {
    if (local.data[static_cast<size_t>(i)] == want.data[static_cast<size_t>(i)]) continue;
    error.index = want.Unravel(i);
    for (size_t k = 0; k < error.index.size(); ++k) error.index[k] += want_box[k].first;
    error.got = local.data[static_cast<size_t>(i)];
    error.want = want.data[static_cast<size_t>(i)];
    error.message = fmt::format("device {} holds {} at {}, the weight is {} there", d, error.got,
                                IndexText(error.index), error.want);
    break;
  }
  return error;
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
  for (const planner::ParamPlan& p : plan.params) {
    const TensorEntry& tensor = tree.tensors[static_cast<size_t>(p.tensor)];
    const planner::LayoutGroup& group = plan.groups[static_cast<size_t>(p.group)];
    if (tensor.role != TensorRole::kParameter) continue;
    if (!group.layout.even() || group.expert_layout) {
      return Status::BadInput({}, tensor.name + ": the numeric check needs an even layout (" + p.effective.ToString() +
                                      " on " + tensor.shape.ToString() + ")");
    }
    const Dims dims(tensor.shape.dims().begin(), tensor.shape.dims().end());
    EP_ASSIGN_OR_RETURN(DistSpec spec, SpecFromPartition(p.effective, tensor.shape.rank(), mesh));
    const HostTensor w = MakeWeight(tensor.name, dims, options.seed);
    ++report->params;
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
      if (d == fault.offset_device) {
        for (size_t k = 0; k < box.size(); ++k) {
          if (geo.Tiles(spec.dims[k]) <= 1) continue;
          const int64_t length = box[k].second - box[k].first;
          box[k] = {box[k].first + length, box[k].second + length};
          break;
        }
      }
      const std::vector<Range> want_box = placed.BoxOf(geo, d);
      const bool extent_ok =
          std::equal(box.begin(), box.end(), want_box.begin(), want_box.end(),
                     [](const planner::Range& a, const Range& b) { return a.second - a.first == b.second - b.first; });
      placement.shapes_ok = placement.shapes_ok && extent_ok;
      if (!root && !geo.Owns(d)) continue;
      HostTensor local = SliceBox(w, std::vector<Range>(box.begin(), box.end()));
      if (d == fault.corrupt_device && local.size() > 0) local.data[0] += 1.0;
      // Three messages per tensor, twenty in all; shapes on every process, values on the root.
      ShardError error = CheckShard(tensor, p, d, box, want_box, w, local, root);
      if (root && !error.message.empty()) {
        ++report->shard_errors_total;
        if (report->shard_errors.size() < 20 && param_errors++ < 3) report->shard_errors.push_back(std::move(error));
      }
      if (root) {
        report->measured_params[static_cast<size_t>(d)] += ByteSize(local.size(), DTypeBits(tensor.dtype)).value_or(0);
      }
      if (geo.Owns(d)) placed.local.push_back(local);
      if (root && distributed) all.local.push_back(std::move(local));
    }
    placement.sharded.emplace(tensor.name, std::move(placed));
    if (root && distributed) placement.sharded_all.emplace(tensor.name, std::move(all));
    if (root) placement.reference.emplace(tensor.name, Distribute(w, spec, geo1));
  }
  return placement;
}

// Token ids [batch, seq], pseudo-random under the seed.
HostTensor TokenIds(const ModelDesc& model, uint64_t seed) {
  HostTensor ids({model.batch, model.seq});
  uint64_t state = seed ^ 0x1D5ull;
  for (double& v : ids.data) v = static_cast<double>(SplitMix(&state) % static_cast<uint64_t>(model.vocab));
  return ids;
}

ParamLookup LookupIn(const std::unordered_map<std::string, DistTensor>& params) {
  return ParamLookup([&params](const std::string& name) -> const DistTensor& {
    auto it = params.find(name);
    EP_CHECK(it != params.end(), "the model needs tensor '" + name + "', which the tree lacks");
    return it->second;
  });
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

// One output of the sharded run against the unsharded reference, device block by block. The tolerances
// are per op: the sharded run sums in a different order, nothing else.
Comparison CompareOutput(const Activation& want, const DistTensor& out, const MeshGeometry& geo,
                         const MeshGeometry& geo1, int64_t devices) {
  const HostTensor ref = Assemble(want.value, geo1);
  Comparison c{want.name};
  double ref_max = 0;
  ErrorSum sum;
  for (double v : ref.data) ref_max = std::max(ref_max, std::abs(v));
  c.max_nmse = 1e-20;
  c.max_abs_tol = 1e-9 * std::max(1.0, ref_max);
  for (int64_t d = 0; d < devices; ++d) {
    const std::vector<Range> box = out.BoxOf(geo, d);
    const HostTensor slice = SliceBox(ref, box);
    const HostTensor& block = out.local[static_cast<size_t>(d)];
    for (int64_t e = 0; e < slice.size(); ++e) {
      const double diff = sum.Add(block.data[static_cast<size_t>(e)], slice.data[static_cast<size_t>(e)]);
      if (diff > c.max_abs_tol && c.device < 0) {
        c.device = d;
        c.index = slice.Unravel(e);
        for (size_t k = 0; k < c.index.size(); ++k) c.index[k] += box[k].first;
      }
    }
  }
  c.nmse = sum.nmse();
  c.max_abs = sum.max_abs;
  c.ok = c.nmse <= c.max_nmse && c.max_abs <= c.max_abs_tol;
  return c;
}

}  // namespace

StatusOr<NumericReport> RunNumericCheck(const ModelDesc& model, const planner::Plan& plan, const ParamTree& tree,
                                        const NumericOptions& options) {
  std::unique_ptr<Engine> in_process;
  Engine* engine = options.engine;
  if (engine == nullptr) {
    in_process = MakeInProcessEngine();
    engine = in_process.get();
  }
  NumericReport report;
  const Mesh& mesh = plan.mesh;
  const int64_t devices = mesh.NumDevices();
  report.devices = devices;
  EP_ASSIGN_OR_RETURN(report.param_bytes, CheckSimulationFits(plan, options));
  Mesh one = mesh;
  for (int64_t& s : one.shape) s = 1;
  one.dcn_shape.clear();
  const MeshGeometry geo1(one);

  // This process's devices. The root cuts and checks every device's shards (and, on a distributed
  // engine, keeps them all to rerun the forward in process); the other processes cut only their own.
  EP_ASSIGN_OR_RETURN(std::unique_ptr<Transport> transport, engine->Connect(mesh));
  const MeshGeometry& geo = transport->geo();
  const bool root = transport->root();
  const bool distributed = engine->distributed();  // compared with the in-process engine
  EP_ASSIGN_OR_RETURN(const Placement placement,
                      PlaceParameters(plan, tree, options, geo, geo1, root, distributed, &report));

  // Inputs: token ids [batch, seq], laid out as EasyDeL constrains them (batch and sequence axes).
  const DistSpec ids_spec = ActivationSpec(mesh, {model.batch_axes, model.sequence_axes});
  report.batch = model.batch;
  report.seq = model.seq;
  if (!EvenlyDivisible({model.batch, model.seq}, ids_spec, geo)) {
    return Status::BadInput({}, fmt::format("batch {} x sequence {} is not divisible by the activation layout {}",
                                            model.batch, model.seq, ids_spec.ToString(mesh)));
  }
  EP_RETURN_IF_ERROR(CheckMoeBlock(model, mesh));
  const HostTensor ids = TokenIds(model, options.seed);
  std::vector<Activation> want;
  if (root) {
    CommLog reference_log;
    Collectives comm1(geo1, model.bytes_per_element, &reference_log, Injection::kNone);
    Spmd spmd1(comm1);
    want = Forward(model, spmd1, LookupIn(placement.reference), Distribute(ids, ids_spec, geo1));
  }
  if (!placement.shapes_ok) return report;

  Collectives comm(*transport, model.bytes_per_element, &report.comm, options.injection);
  Spmd spmd(comm);
  LiveMeter meter(geo.local_devices(), model.bytes_per_element);  // declared before `got`, whose tensors it charges
  spmd.set_meter(&meter);
  const std::vector<Activation> got = Forward(model, spmd, LookupIn(placement.sharded), spmd.Place(ids, ids_spec));
  spmd.set_meter(nullptr);
  report.executed = true;
  MeasureActivations(got, model, geo, meter, *transport, &report);

  // Every process must have run the same collectives: their logs hash alike.
  const size_t local = static_cast<size_t>(geo.local_devices());
  const std::vector<int64_t> log_hashes = transport->GatherValues(std::vector<int64_t>(local, HashOf(report.comm)));
  std::vector<DistTensor> outputs;  // every device's block of each output, on the root
  for (const Activation& a : got) {
    DistTensor out{a.value.shape, a.value.spec, {}};
    if (a.compared) out.local = transport->GatherBlocks(a.value.local);
    outputs.push_back(std::move(out));
  }
  if (!root) return report;
  for (size_t d = 0; d < log_hashes.size(); ++d) {
    if (log_hashes[d] != log_hashes[0]) {
      return Status::Internal(
          fmt::format("the {} engine's process running device {} ran different collectives "
                      "from the root's",
                      engine->name(), d));
    }
  }
  if (distributed) {
    report.engine = CompareWithInProcess(model, mesh, LookupIn(placement.sharded_all), ids, ids_spec, options.injection,
                                         outputs, report.comm);
    report.engine->engine = engine->name();
    report.engine->processes = engine->processes();
    report.engine->devices_per_process = geo.local_devices();
  }
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i].compared) report.comparisons.push_back(CompareOutput(want[i], outputs[i], geo, geo1, devices));
  }
  return report;
}

}  // namespace easyplan::kernels
