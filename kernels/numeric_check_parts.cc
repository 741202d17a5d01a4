// The numeric check's parts that the plain check (kernels/numeric_check.cc) and the pipelined one
// (kernels/pipeline_check.cc) share: kernels/numeric_check_parts.h.
#include "kernels/numeric_check_parts.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>

#include "core/checked_math.h"

namespace easyplan::kernels::internal {

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

std::string RecordKey(const CommRecord& r) {
  return fmt::format("|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", static_cast<int>(r.kind), r.scope, r.op, r.tensor_spec,
                     r.group_size, ComparedBytes(r), r.parameter, fmt::join(r.axes, ","), r.stage, r.to_stage);
}

int64_t HashOf(const CommLog& log) {
  std::string text = fmt::format("{},{}", log.dropped_all_reduces, log.dropped_sends);
  for (const CommRecord& r : log.records) text += RecordKey(r);
  return static_cast<int64_t>(Fnv1a(text) >> 1);
}

std::string RecordText(const CommRecord& r) {
  return fmt::format("{} in {} ({}): {} over a group of {}, {} bytes per device", CollectiveName(r.kind), r.scope, r.op,
                     r.tensor_spec, r.group_size, r.bytes_per_device);
}

int64_t ForwardRecords(const CommLog& log) {
  return static_cast<int64_t>(std::count_if(log.records.begin(), log.records.end(), [](const CommRecord& r) {
    return r.backward != CommRecord::Backward::kOnly;
  }));
}

// The first difference between two engines' collectives ("" when none).
std::string FirstDifference(const CommLog& engine, const CommLog& in_process) {
  const size_t n = std::min(engine.records.size(), in_process.records.size());
  for (size_t i = 0; i < n; ++i) {
    const CommRecord& a = engine.records[i];
    const CommRecord& b = in_process.records[i];
    if (a.kind != b.kind || a.scope != b.scope || a.op != b.op || a.tensor_spec != b.tensor_spec ||
        a.group_size != b.group_size || ComparedBytes(a) != ComparedBytes(b) || a.parameter != b.parameter ||
        a.axes != b.axes || a.stage != b.stage || a.to_stage != b.to_stage) {
      return fmt::format("collective {}: {} here, {} in process", i + 1, RecordText(a), RecordText(b));
    }
  }
  if (engine.records.size() != in_process.records.size()) {
    return fmt::format("{} collectives here, {} in process", engine.records.size(), in_process.records.size());
  }
  if (engine.dropped_all_reduces != in_process.dropped_all_reduces) return "a different number of dropped all-reduces";
  if (engine.dropped_sends != in_process.dropped_sends) return "a different number of dropped stage sends";
  return "";
}

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

Status CheckEvenLayout(const TensorEntry& tensor, const planner::ParamPlan& p, const planner::LayoutGroup& group) {
  if (group.layout.even() && !group.expert_layout) return Status();
  return Status::BadInput({}, tensor.name + ": the numeric check needs an even layout (" + p.effective.ToString() +
                                  " on " + tensor.shape.ToString() + ")");
}

void OffsetBlock(const DistSpec& spec, const MeshGeometry& geo, std::vector<planner::Range>* box) {
  for (size_t k = 0; k < box->size(); ++k) {
    if (geo.Tiles(spec.dims[k]) <= 1) continue;
    planner::Range& range = (*box)[k];
    const int64_t length = range.second - range.first;
    range = {range.first + length, range.second + length};
    return;
  }
}

bool SameExtents(const std::vector<planner::Range>& box, const std::vector<Range>& want_box) {
  return std::equal(box.begin(), box.end(), want_box.begin(), want_box.end(),
                    [](const planner::Range& a, const Range& b) { return a.second - a.first == b.second - b.first; });
}

void RecordShardError(ShardError error, int64_t* param_errors, NumericReport* report) {
  ++report->shard_errors_total;
  if (report->shard_errors.size() < 20 && (*param_errors)++ < 3) report->shard_errors.push_back(std::move(error));
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

void AddEngineDifference(const DistTensor& want, const DistTensor& got, EngineComparison& c, double& scale) {
  ++c.outputs;
  ErrorSum sum;
  for (size_t d = 0; d < want.local.size() && d < got.local.size(); ++d) {
    const HostTensor& x = want.local[d];
    const HostTensor& y = got.local[d];
    for (size_t e = 0; e < x.data.size() && e < y.data.size(); ++e) {
      sum.Add(y.data[e], x.data[e]);
      scale = std::max(scale, std::abs(x.data[e]));
    }
  }
  c.max_abs_diff = std::max(c.max_abs_diff, sum.max_abs);
  c.max_nmse = std::max(c.max_nmse, sum.nmse());
}

}  // namespace easyplan::kernels::internal
