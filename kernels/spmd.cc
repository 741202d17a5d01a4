#include "kernels/spmd.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/status.h"

namespace easyplan::kernels {
namespace {

using Entry = std::vector<int>;

bool Contains(const Entry& entry, int axis) { return std::find(entry.begin(), entry.end(), axis) != entry.end(); }

bool Intersects(const Entry& a, const Entry& b) {
  for (int x : a) {
    if (Contains(b, x)) return true;
  }
  return false;
}

bool IsPrefix(const Entry& prefix, const Entry& entry) {
  return prefix.size() <= entry.size() && std::equal(prefix.begin(), prefix.end(), entry.begin());
}

// Axes named by the dims in `which` (all dims when empty-list semantics are not wanted: pass them all).
Entry AxesOf(const DistSpec& spec, const std::vector<int>& which) {
  Entry axes;
  for (int d : which)
    axes.insert(axes.end(), spec.dims[static_cast<size_t>(d)].begin(), spec.dims[static_cast<size_t>(d)].end());
  return axes;
}

std::vector<int> AllDims(int rank) {
  std::vector<int> dims;
  for (int d = 0; d < rank; ++d) dims.push_back(d);
  return dims;
}

// Calls f(index) for every multi-index of `shape` in row-major order (one index vector, no allocation
// per element).
template <typename F>
void ForEachIndex(const Dims& shape, F f) {
  if (NumElements(shape) == 0) return;
  Dims index(shape.size(), 0);
  while (true) {
    f(index);
    size_t k = shape.size();
    while (k-- > 0) {
      if (++index[k] < shape[k]) break;
      index[k] = 0;
    }
    if (k == static_cast<size_t>(-1)) return;
  }
}

// The entries of `spec` without mesh axes of size 1: they cut nothing and move nothing, so a spec that
// names them is the same layout as one that does not (a ColumnWise weight names `fsdp` on a mesh whose
// fsdp is 1). Dropping them keeps every "is this axis used" test about axes that exist.
DistSpec Nontrivial(DistSpec spec, const MeshGeometry& geo) {
  auto trivial = [&geo](int axis) { return geo.AxisSize(axis) == 1; };
  for (Entry& e : spec.dims) e.erase(std::remove_if(e.begin(), e.end(), trivial), e.end());
  spec.partial.erase(std::remove_if(spec.partial.begin(), spec.partial.end(), trivial), spec.partial.end());
  return spec;
}

// `entry` without the axes in `taken`.
Entry Minus(const Entry& entry, const Entry& taken) {
  Entry out;
  for (int a : entry) {
    if (!Contains(taken, a)) out.push_back(a);
  }
  return out;
}

int64_t GlobalElements(const DistTensor& t) { return NumElements(t.shape); }

// How many dims of `candidate` name the same axes as `user` does (XLA ranks a dot's output candidates by
// their agreement with the sharding its user asks for).
int Agreement(const std::vector<Entry>& candidate, const DistSpec& user) {
  int agree = 0;
  for (size_t d = 0; d < candidate.size() && d < user.dims.size(); ++d) {
    if (!candidate[d].empty() && candidate[d] == user.dims[d]) ++agree;
  }
  return agree;
}

}  // namespace

DistTensor Spmd::Place(const HostTensor& full, const DistSpec& spec) const {
  DistTensor t = Distribute(full, spec, geo_);
  t.value_id = ++last_value_id_;
  return t;
}

DistTensor Spmd::Track(DistTensor t, bool same_value) const {
  if (!same_value) t.value_id = ++last_value_id_;
  if (meter_ == nullptr || depth_ != 1) return t;
  // Dropping the old charge first: an op that reused its operand's blocks (the last holder) frees
  // them as it produces the result, and the peak must not count both.
  t.live.reset();
  t.live = meter_->Charge(t);
  return t;
}

void Spmd::Untrack(DistTensor& t) const { t.live.reset(); }

DistTensor Spmd::LocalSlice(DistTensor t, int dim, const std::vector<int>& axes) const {
  const size_t d = static_cast<size_t>(dim);
  const int64_t g = geo_.Tiles(axes);
  if (g > 1) {
    for (int64_t dev = 0; dev < static_cast<int64_t>(t.local.size()); ++dev) {
      HostTensor& x = t.local[static_cast<size_t>(dev)];
      const Range r = geo_.DimRange(geo_.LocalDevice(static_cast<size_t>(dev)), x.shape[d], axes);
      x = SliceDim(x, dim, r.first, r.second - r.first);
    }
  }
  for (int a : axes) t.spec.dims[d].push_back(a);
  return t;
}

DistTensor Spmd::Resolve(DistTensor t, const std::string& why) {
  const Nest nest(this);
  if (t.spec.partial.empty()) return Track(std::move(t), /*same_value=*/true);
  const std::vector<int> axes = t.spec.partial;
  return Track(comm_.AllReduce(std::move(t), axes, ReduceOp::kSum, why));
}

DistSpec ConstrainedSpec(const Dims& shape, const DistSpec& wanted, const MeshGeometry& geo) {
  DistSpec spec = Nontrivial(wanted, geo);
  for (size_t d = 0; d < spec.dims.size() && d < shape.size(); ++d) {
    if (shape[d] % geo.Tiles(spec.dims[d]) != 0) spec.dims[d].clear();
  }
  return spec;
}

DistTensor Spmd::Reshard(DistTensor t, const DistSpec& wanted, const std::string& why) {
  const Nest nest(this);
  EP_CHECK(wanted.partial.empty() && wanted.dims.size() == t.spec.dims.size(), "reshard target");
  const int rank = t.rank();
  t.spec = Nontrivial(std::move(t.spec), geo_);
  // A constraint that does not divide a dim leaves that dim replicated (activations only; parameters
  // come from the plan, which the numeric check requires to be even).
  DistSpec target = Nontrivial(wanted, geo_);
  if (t.spec.partial.empty() && t.spec.dims == target.dims) return Track(std::move(t), /*same_value=*/true);
  target = ConstrainedSpec(t.shape, target, geo_);
  if (!t.spec.partial.empty()) {
    // A dim whose target extends its entry by exactly the pending axes: reduce-scatter onto it.
    int scatter_dim = -1;
    Entry suffix;
    for (int d = 0; d < rank && scatter_dim < 0; ++d) {
      const Entry& cur = t.spec.dims[static_cast<size_t>(d)];
      const Entry& tgt = target.dims[static_cast<size_t>(d)];
      if (!IsPrefix(cur, tgt) || tgt.size() - cur.size() != t.spec.partial.size()) continue;
      Entry rest(tgt.begin() + static_cast<std::ptrdiff_t>(cur.size()), tgt.end());
      Entry sorted = rest;
      std::sort(sorted.begin(), sorted.end());
      if (sorted == t.spec.partial && t.shape[static_cast<size_t>(d)] % geo_.Tiles(tgt) == 0) {
        scatter_dim = d;
        suffix = rest;
      }
    }
    if (scatter_dim >= 0) {
      t = comm_.ReduceScatter(std::move(t), suffix, scatter_dim, why + " (pending sum, target sharded)");
    } else {
      t = Resolve(std::move(t), why + " (pending sum)");
    }
  }
  // An entry that moves whole to a dim whose target is its current entry plus it: all-to-all.
  for (int i = 0; i < rank; ++i) {
    const Entry& cur = t.spec.dims[static_cast<size_t>(i)];
    if (cur.empty() || IsPrefix(cur, target.dims[static_cast<size_t>(i)])) continue;
    if (!target.dims[static_cast<size_t>(i)].empty()) continue;
    for (int j = 0; j < rank; ++j) {
      if (j == i) continue;
      const Entry& cj = t.spec.dims[static_cast<size_t>(j)];
      Entry want = cj;
      want.insert(want.end(), cur.begin(), cur.end());
      if (want == target.dims[static_cast<size_t>(j)] &&
          t.local[0].shape[static_cast<size_t>(j)] % geo_.Tiles(cur) == 0) {
        t = comm_.AllToAll(std::move(t), i, j, why + " (axes move between dims)");
        break;
      }
    }
  }
  for (int i = 0; i < rank; ++i) {
    if (!IsPrefix(t.spec.dims[static_cast<size_t>(i)], target.dims[static_cast<size_t>(i)])) {
      t = comm_.AllGather(std::move(t), i, why);
    }
  }
  for (int i = 0; i < rank; ++i) {
    const Entry& cur = t.spec.dims[static_cast<size_t>(i)];
    const Entry& tgt = target.dims[static_cast<size_t>(i)];
    if (cur.size() < tgt.size()) {
      t = LocalSlice(std::move(t), i, Entry(tgt.begin() + static_cast<std::ptrdiff_t>(cur.size()), tgt.end()));
    }
  }
  return Track(std::move(t));
}

DistTensor Spmd::ReshardOnce(const DistTensor& t, const DistSpec& target, const std::string& why) {
  // XLA's common-subexpression elimination keeps one collective for one value moved to one layout: the
  // all-gather of a normed hidden state feeds q, k and v (and gate and up) once, as Megatron's sequence
  // parallelism gathers it once per block.
  std::erase_if(reshards_, [](const ReshardMemo& m) { return m.source_charged && m.source_live.expired(); });
  if (t.value_id != 0) {
    for (const ReshardMemo& m : reshards_) {
      if (m.source == t.value_id && m.target == target) return m.result;
    }
  }
  DistTensor out = Reshard(t, target, why);
  if (t.value_id != 0) {
    if (reshards_.size() >= kReshardMemoSize) reshards_.erase(reshards_.begin());
    ReshardMemo memo{t.value_id, t.live, t.live != nullptr, target, out};
    // A gathered activation is a buffer the program holds while its consumers run (a gathered weight
    // is transient, as every parameter gather inside a Dot is here).
    memo.result.live.reset();
    if (meter_ != nullptr && !out.parameter) memo.result.live = meter_->Charge(memo.result);
    reshards_.push_back(std::move(memo));
  }
  return out;
}

DistTensor Spmd::Dot(const DistTensor& lhs, const DistTensor& rhs, const DotDims& dims, const std::string& why,
                     const DotOptions& options) {
  const DistSpec* user = options.user;
  const Nest nest(this);
  // The operands as they move: the caller's tensors until a step changes them.
  const DistTensor* pa = &lhs;
  const DistTensor* pb = &rhs;
  std::optional<DistTensor> a_store, b_store;
  auto move_to = [this](const DistTensor*& p, std::optional<DistTensor>& store, const DistSpec& target,
                        const std::string& reason) {
    if (p->spec.partial.empty() && Nontrivial(p->spec, geo_).dims == target.dims) return;
    store = ReshardOnce(*p, target, reason);
    p = &*store;
  };
  // A pending sum the caller lets through (one operand's only): the product is linear in it, so the
  // result is partial over the same axes.
  std::vector<int> passed;
  auto hold_partial = [&](const DistTensor*& p, std::optional<DistTensor>& store) {
    store = *p;
    passed = Nontrivial(store->spec, geo_).partial;
    store->spec.partial.clear();
    p = &*store;
  };
  if (options.keep_partial && !pa->spec.partial.empty() && pb->spec.partial.empty()) {
    hold_partial(pa, a_store);
  } else if (options.keep_partial && !pb->spec.partial.empty() && pa->spec.partial.empty()) {
    hold_partial(pb, b_store);
  }
  if (!pa->spec.partial.empty()) {
    a_store = Resolve(*pa, why + " (lhs pending sum)");
    pa = &*a_store;
  }
  if (!pb->spec.partial.empty()) {
    b_store = Resolve(*pb, why + " (rhs pending sum)");
    pb = &*b_store;
  }
  const DistSpec sa = Nontrivial(pa->spec, geo_), sb = Nontrivial(pb->spec, geo_);
  const int ra = pa->rank(), rb = pb->rank();
  auto free_dims = [](int rank, std::vector<int> used, const std::vector<int>& more) {
    used.insert(used.end(), more.begin(), more.end());
    return FreeDims(rank, used);
  };
  const std::vector<int> a_free = free_dims(ra, dims.lhs_batch, dims.lhs_contract);
  const std::vector<int> b_free = free_dims(rb, dims.rhs_batch, dims.rhs_contract);
  const size_t nb = dims.lhs_batch.size();

  // 1. The result's sharding, as XLA's sharding propagation infers a dot's output
  //    (InferDotShardingFromOperands, xla/service/sharding_propagation.cc): each operand proposes its own
  //    non-contracting shardings (its contracting dims replicated); the first candidate is the one that
  //    agrees with the sharding the result's user constrains it to, else the larger operand's; the other
  //    then fills the dims the first leaves replicated, with axes the first does not use.
  std::vector<Entry> from_a, from_b;  // output order: batch, lhs free, rhs free
  for (size_t i = 0; i < nb; ++i) {
    from_a.push_back(sa.dims[static_cast<size_t>(dims.lhs_batch[i])]);
    from_b.push_back(sb.dims[static_cast<size_t>(dims.rhs_batch[i])]);
  }
  for (int d : a_free) {
    from_a.push_back(sa.dims[static_cast<size_t>(d)]);
    from_b.emplace_back();
  }
  for (int d : b_free) {
    from_a.emplace_back();
    from_b.push_back(sb.dims[static_cast<size_t>(d)]);
  }
  bool a_first = GlobalElements(*pa) >= GlobalElements(*pb);
  if (user != nullptr) {
    const DistSpec u = Nontrivial(*user, geo_);
    const int agree_a = Agreement(from_a, u), agree_b = Agreement(from_b, u);
    if (agree_a != agree_b) a_first = agree_a > agree_b;
  }
  std::vector<Entry> out_dims = a_first ? from_a : from_b;
  const std::vector<Entry>& second = a_first ? from_b : from_a;
  Entry used;
  for (const Entry& e : out_dims) used.insert(used.end(), e.begin(), e.end());
  for (size_t d = 0; d < out_dims.size(); ++d) {
    if (out_dims[d].empty() && !second[d].empty() && !Intersects(second[d], used)) {
      out_dims[d] = second[d];
      used.insert(used.end(), second[d].begin(), second[d].end());
    }
  }

  // 2. Each operand's non-contracting dims take the result's sharding: an operand that shares it keeps its
  //    layout, the other is gathered where it differs (dot_handler.cc's base cases: "LHS and output have
  //    the same partitioned non-contracting dimensions" replicate the rhs, and the mirror case the lhs).
  DistSpec ta = ReplicatedSpec(ra), tb = ReplicatedSpec(rb);
  for (size_t i = 0; i < nb; ++i) {
    ta.dims[static_cast<size_t>(dims.lhs_batch[i])] = out_dims[i];
    tb.dims[static_cast<size_t>(dims.rhs_batch[i])] = out_dims[i];
  }
  for (size_t i = 0; i < a_free.size(); ++i) ta.dims[static_cast<size_t>(a_free[i])] = out_dims[nb + i];
  for (size_t i = 0; i < b_free.size(); ++i) {
    tb.dims[static_cast<size_t>(b_free[i])] = out_dims[nb + a_free.size() + i];
  }

  // 3. Contracting dims, with axes the result does not use: sharded alike on both operands, a local
  //    partial product (Case 3, "group on contracting dims": the sum is resolved into the result's
  //    sharding by its user, a reduce-scatter when that shards a dim on those axes); sharded on one
  //    operand only, the other is sliced locally to match (free); sharded differently, the smaller
  //    operand is resharded to line up with the larger, as PartitionDotGroupOnContractingImpl does.
  auto axes_of = [](const DistSpec& s) {
    Entry all;
    for (const Entry& e : s.dims) all.insert(all.end(), e.begin(), e.end());
    return all;
  };
  const bool a_larger = GlobalElements(*pa) >= GlobalElements(*pb);
  for (size_t i = 0; i < dims.lhs_contract.size(); ++i) {
    const size_t da = static_cast<size_t>(dims.lhs_contract[i]), db = static_cast<size_t>(dims.rhs_contract[i]);
    const Entry ea = Minus(sa.dims[da], used), eb = Minus(sb.dims[db], used);
    const int64_t size = pa->shape[da];
    auto fits = [&](const Entry& e, const DistSpec& s) {
      return !Intersects(e, axes_of(s)) && size % geo_.Tiles(e) == 0;
    };
    Entry pick;
    if (ea == eb) {
      pick = ea;
    } else if (eb.empty() && fits(ea, tb)) {
      pick = ea;
    } else if (ea.empty() && fits(eb, ta)) {
      pick = eb;
    } else if (a_larger && fits(ea, tb)) {
      pick = ea;
    } else if (!a_larger && fits(eb, ta)) {
      pick = eb;
    }
    if (Intersects(pick, axes_of(ta)) || Intersects(pick, axes_of(tb))) pick.clear();
    ta.dims[da] = pick;
    tb.dims[db] = pick;
  }
  move_to(pa, a_store, ta, why + (a_first ? " (lhs contracting dim)" : " (lhs aligned to the result)"));
  move_to(pb, b_store, tb, why + (a_first ? " (rhs aligned to the result)" : " (rhs contracting dim)"));
  const DistTensor& x = *pa;
  const DistTensor& y = *pb;
  // 4. The local products.
  DistTensor out;
  const DistSpec sx = Nontrivial(x.spec, geo_), sy = Nontrivial(y.spec, geo_);
  for (int d : dims.lhs_batch) out.shape.push_back(x.shape[static_cast<size_t>(d)]);
  for (int d : a_free) out.shape.push_back(x.shape[static_cast<size_t>(d)]);
  for (int d : b_free) out.shape.push_back(y.shape[static_cast<size_t>(d)]);
  for (int d : dims.lhs_batch) out.spec.dims.push_back(sx.dims[static_cast<size_t>(d)]);
  for (int d : a_free) out.spec.dims.push_back(sx.dims[static_cast<size_t>(d)]);
  for (int d : b_free) out.spec.dims.push_back(sy.dims[static_cast<size_t>(d)]);
  for (int d : dims.lhs_contract) {
    for (int axis : sx.dims[static_cast<size_t>(d)]) out.spec.partial.push_back(axis);
  }
  for (int axis : passed) {
    EP_CHECK(!out.spec.Uses(axis) && !Contains(out.spec.partial, axis),
             why + ": a passed-through pending sum's axis also shards the product");
    out.spec.partial.push_back(axis);
  }
  std::sort(out.spec.partial.begin(), out.spec.partial.end());
  out.local.reserve(x.local.size());
  for (size_t dev = 0; dev < x.local.size(); ++dev) out.local.push_back(kernels::Dot(x.local[dev], y.local[dev], dims));
  if (matmuls_ != nullptr && options.matmul) LogMatmul(x, y, out, dims, why);
  return Track(std::move(out));
}

void Spmd::LogMatmul(const DistTensor& x, const DistTensor& y, const DistTensor& out, const DotDims& dims,
                     const std::string& why) {
  MatmulRecord record{comm_.scope(), why};
  record.attention_core = attention_core_;
  record.routed_experts = routed_experts_;
  std::vector<int64_t>& scope_flops = matmuls_->scope_flops[record.scope];
  scope_flops.resize(x.local.size(), 0);
  for (size_t dev = 0; dev < x.local.size(); ++dev) {
    const int64_t flops = DotFlops(x.local[dev], dims, out.local[dev]);
    scope_flops[dev] += flops;
    if (dev == 0 || flops > record.flops) {
      record.flops = flops;
      record.operand_elements = x.local[dev].size() + y.local[dev].size();
      record.weight_elements = y.parameter ? y.local[dev].size() : 0;
      record.elements = record.operand_elements + out.local[dev].size();
      record.device = geo_.LocalDevice(dev);
      const Dims& lhs = x.local[dev].shape;
      const Dims& rhs = y.local[dev].shape;
      auto product = [](const Dims& shape, const std::vector<int>& dims_of) {
        int64_t p = 1;
        for (int d : dims_of) p *= shape[static_cast<size_t>(d)];
        return p;
      };
      std::vector<int> lhs_used = dims.lhs_batch, rhs_used = dims.rhs_batch;
      lhs_used.insert(lhs_used.end(), dims.lhs_contract.begin(), dims.lhs_contract.end());
      rhs_used.insert(rhs_used.end(), dims.rhs_contract.begin(), dims.rhs_contract.end());
      record.batch = product(lhs, dims.lhs_batch);
      record.m = product(lhs, FreeDims(static_cast<int>(lhs.size()), lhs_used));
      record.n = product(rhs, FreeDims(static_cast<int>(rhs.size()), rhs_used));
      record.k = product(lhs, dims.lhs_contract);
      if (routed_experts_ && dims.rhs_batch.empty() && rhs.size() >= 3 && rhs[0] > 0) {
        // An expert kernel [E, in, out] against every token: E matmuls, one per expert (n is out's).
        record.batch = rhs[0];
        record.n /= rhs[0];
      }
    }
  }
  matmuls_->records.push_back(std::move(record));
}

Spmd::Operand Spmd::OperandOf(const DistTensor& t) {
  Operand o{t.value_id, 0};
  for (const HostTensor& x : t.local) o.elements = std::max(o.elements, x.size());
  return o;
}

DistTensor Spmd::LogMemoryOp(std::vector<Operand> inputs, DistTensor out, const std::string& why) {
  if (matmuls_ == nullptr) return out;
  const int64_t bytes = comm_.bytes_per_element();
  MemoryOpRecord record{comm_.scope(), why, 0, OperandOf(out).elements * bytes, attention_core_};
  for (const Operand& in : inputs) {
    if (in.value != 0 && in.value == last_memory_value_) {
      // Fused with the op that produced it (the last record): its result never reached HBM.
      matmuls_->memory_ops.back().written = 0;
      continue;
    }
    record.read += in.elements * bytes;
  }
  matmuls_->memory_ops.push_back(std::move(record));
  last_memory_value_ = out.value_id;
  return out;
}

DistTensor Spmd::Map(DistTensor t, const std::function<double(double)>& f) {
  const Nest nest(this);
  t = Resolve(std::move(t), "elementwise op needs full values");
  const Operand in = OperandOf(t);
  for (HostTensor& x : t.local) {
    for (double& v : x.data) v = f(v);
  }
  return LogMemoryOp({in}, Track(std::move(t)), "elementwise");
}

DistTensor Spmd::MapIndexed(DistTensor t, const std::function<double(double, const Dims&)>& f) {
  const Nest nest(this);
  t = Resolve(std::move(t), "elementwise op needs full values");
  const Operand in = OperandOf(t);
  for (int64_t dev = 0; dev < static_cast<int64_t>(t.local.size()); ++dev) {
    HostTensor& x = t.local[static_cast<size_t>(dev)];
    if (x.meta) continue;
    const std::vector<Range> box = t.BoxOf(geo_, geo_.LocalDevice(static_cast<size_t>(dev)));
    Dims global(box.size());
    int64_t flat = 0;
    ForEachIndex(x.shape, [&](const Dims& index) {
      for (size_t k = 0; k < index.size(); ++k) global[k] = index[k] + box[k].first;
      x.data[static_cast<size_t>(flat)] = f(x.data[static_cast<size_t>(flat)], global);
      ++flat;
    });
  }
  return LogMemoryOp({in}, Track(std::move(t)), "elementwise (indexed)");
}

DistTensor Spmd::Binary(DistTensor a, DistTensor b, const std::function<double(double, double)>& f,
                        const std::string& why, bool linear_add) {
  const Nest nest(this);
  EP_CHECK(a.rank() == b.rank(), "binary op ranks differ");
  const bool keep_partial = linear_add && !a.spec.partial.empty() && a.spec.partial == b.spec.partial;
  if (!keep_partial) {
    a = Resolve(std::move(a), why + " (pending sum)");
    b = Resolve(std::move(b), why + " (pending sum)");
  }
  // Each operand takes, per dim, the entry of the operand that is not broadcast there (lhs first).
  DistSpec target = ReplicatedSpec(a.rank());
  target.partial = a.spec.partial;
  Entry used;
  for (int d = 0; d < a.rank(); ++d) {
    const size_t k = static_cast<size_t>(d);
    const Entry& pick = a.shape[k] != 1 ? a.spec.dims[k] : b.spec.dims[k];
    if (!Intersects(pick, used)) {
      target.dims[k] = pick;
      used.insert(used.end(), pick.begin(), pick.end());
    }
  }
  DistSpec ta = target, tb = target;
  ta.partial.clear();
  tb.partial.clear();
  for (int d = 0; d < a.rank(); ++d) {
    const size_t k = static_cast<size_t>(d);
    if (a.shape[k] == 1) ta.dims[k].clear();
    if (b.shape[k] == 1) tb.dims[k].clear();
  }
  if (keep_partial) {
    // Both partial over the same axes: only the dims may move.
    EP_CHECK(a.spec.dims == ta.dims && b.spec.dims == tb.dims, "partial operands with different layouts");
  } else {
    a = Reshard(std::move(a), ta, why + " (lhs)");
    b = Reshard(std::move(b), tb, why + " (rhs aligned to lhs)");
  }
  const std::vector<Operand> operands = {OperandOf(a), OperandOf(b)};
  DistTensor out{Dims(a.shape.size()), target, {}};
  for (size_t k = 0; k < a.shape.size(); ++k) out.shape[k] = std::max(a.shape[k], b.shape[k]);
  out.spec.partial = keep_partial ? a.spec.partial : std::vector<int>{};
  for (size_t dev = 0; dev < a.local.size(); ++dev) {
    const HostTensor& x = a.local[dev];
    const HostTensor& y = b.local[dev];
    Dims shape(x.shape.size());
    for (size_t k = 0; k < shape.size(); ++k) shape[k] = std::max(x.shape[k], y.shape[k]);
    if (x.meta || y.meta) {
      out.local.push_back(HostTensor::Meta(std::move(shape)));
      continue;
    }
    HostTensor z(shape);
    Dims xs = x.Strides(), ys = y.Strides();
    for (size_t k = 0; k < shape.size(); ++k) {  // broadcast dims do not advance
      if (x.shape[k] == 1) xs[k] = 0;
      if (y.shape[k] == 1) ys[k] = 0;
    }
    int64_t flat = 0;
    ForEachIndex(shape, [&](const Dims& index) {
      int64_t xi = 0, yi = 0;
      for (size_t k = 0; k < index.size(); ++k) {
        xi += index[k] * xs[k];
        yi += index[k] * ys[k];
      }
      z.data[static_cast<size_t>(flat++)] = f(x.data[static_cast<size_t>(xi)], y.data[static_cast<size_t>(yi)]);
    });
    out.local.push_back(std::move(z));
  }
  // The result reuses the lhs's buffer when the lhs dies with this op (the caller moved it in) and is
  // not broadcast, as a compiled elementwise op does: its charge ends before the result's begins.
  // An lhs the caller still holds shares its charge, which then stays.
  if (a.shape == out.shape) a.live.reset();
  return LogMemoryOp(operands, Track(std::move(out)), why);
}

DistTensor Spmd::Add(DistTensor a, DistTensor b, const std::string& why) {
  const Nest nest(this);
  return Track(Binary(
      std::move(a), std::move(b), [](double x, double y) { return x + y; }, why, /*linear_add=*/true));
}

DistTensor Spmd::Mul(DistTensor a, DistTensor b, const std::string& why) {
  const Nest nest(this);
  return Track(Binary(
      std::move(a), std::move(b), [](double x, double y) { return x * y; }, why));
}

DistTensor Spmd::Reduce(DistTensor t, int dim, ReduceOp op, const std::string& why) {
  const Nest nest(this);
  t = Resolve(std::move(t), why + " (pending sum)");
  const Operand reduced = OperandOf(t);
  const size_t d = static_cast<size_t>(dim);
  const Entry axes = t.spec.dims[d];
  for (HostTensor& x : t.local) {
    Dims shape = x.shape;
    shape[d] = 1;
    if (x.meta) {
      x = HostTensor::Meta(std::move(shape));
      continue;
    }
    HostTensor r(shape, op == ReduceOp::kSum ? 0.0 : -INFINITY);
    Dims rs = r.Strides();
    rs[d] = 0;
    int64_t flat = 0;
    ForEachIndex(x.shape, [&](const Dims& index) {
      int64_t ri = 0;
      for (size_t k = 0; k < index.size(); ++k) ri += index[k] * rs[k];
      double& acc = r.data[static_cast<size_t>(ri)];
      const double v = x.data[static_cast<size_t>(flat++)];
      acc = op == ReduceOp::kSum ? acc + v : std::max(acc, v);
    });
    x = std::move(r);
  }
  t.shape[d] = 1;
  t.spec.dims[d].clear();
  if (op == ReduceOp::kSum) {
    t.spec.partial.insert(t.spec.partial.end(), axes.begin(), axes.end());
    std::sort(t.spec.partial.begin(), t.spec.partial.end());
    return LogMemoryOp({reduced}, Track(Resolve(std::move(t), why + " (reduced dim was sharded)")), why);
  }
  return LogMemoryOp(
      {reduced}, Track(comm_.AllReduce(std::move(t), axes, ReduceOp::kMax, why + " (reduced dim was sharded)")), why);
}

DistTensor Spmd::Softmax(DistTensor t, int dim, const std::string& why) {
  const Nest nest(this);
  DistTensor max = Reduce(t, dim, ReduceOp::kMax, why + " max");
  DistTensor e = Binary(
      std::move(t), std::move(max), [](double x, double m) { return std::exp(x - m); }, why);
  DistTensor sum = Reduce(e, dim, ReduceOp::kSum, why + " sum");
  return Track(Binary(
      std::move(e), std::move(sum), [](double x, double s) { return x / s; }, why));
}

DistTensor Spmd::Lift(DistTensor t, int rank) const {
  const Nest nest(this);
  while (t.rank() < rank) {
    t.shape.insert(t.shape.begin(), 1);
    t.spec.dims.insert(t.spec.dims.begin(), Entry{});
    for (HostTensor& x : t.local) x.shape.insert(x.shape.begin(), 1);
  }
  return Track(std::move(t));
}

DistTensor Spmd::Unsqueeze(DistTensor t, int dim) const {
  const Nest nest(this);
  t.shape.insert(t.shape.begin() + dim, 1);
  t.spec.dims.insert(t.spec.dims.begin() + dim, Entry{});
  for (HostTensor& x : t.local) x.shape.insert(x.shape.begin() + dim, 1);
  return Track(std::move(t));
}

DistTensor Spmd::Squeeze(DistTensor t, int dim) const {
  const Nest nest(this);
  EP_CHECK(t.shape[static_cast<size_t>(dim)] == 1, "squeeze of a dim of size > 1");
  t.shape.erase(t.shape.begin() + dim);
  t.spec.dims.erase(t.spec.dims.begin() + dim);
  for (HostTensor& x : t.local) x.shape.erase(x.shape.begin() + dim);
  return Track(std::move(t));
}

DistTensor Spmd::Local(DistTensor t, const std::vector<int>& whole,
                       const std::function<void(HostTensor&, const std::vector<Range>& box)>& f,
                       const std::string& why) {
  const Nest nest(this);
  t = Resolve(std::move(t), why + " (pending sum)");
  for (int d : whole) {
    if (!t.spec.dims[static_cast<size_t>(d)].empty())
      t = comm_.AllGather(std::move(t), d, why + " (needs the whole dim)");
  }
  const Operand in = OperandOf(t);
  for (int64_t dev = 0; dev < static_cast<int64_t>(t.local.size()); ++dev) {
    HostTensor& x = t.local[static_cast<size_t>(dev)];
    if (!x.meta) f(x, t.BoxOf(geo_, geo_.LocalDevice(static_cast<size_t>(dev))));
  }
  return LogMemoryOp({in}, Track(std::move(t)), why);
}

DistTensor Spmd::Transpose(DistTensor t, const std::vector<int>& perm) const {
  const Nest nest(this);
  DistTensor out;
  for (int p : perm) {
    out.shape.push_back(t.shape[static_cast<size_t>(p)]);
    out.spec.dims.push_back(t.spec.dims[static_cast<size_t>(p)]);
  }
  out.spec.partial = t.spec.partial;
  for (const HostTensor& x : t.local) out.local.push_back(kernels::Transpose(x, perm));
  return Track(std::move(out));
}

DistTensor Spmd::Split(DistTensor t, int dim, int64_t major, const std::string& why) {
  const Nest nest(this);
  const size_t d = static_cast<size_t>(dim);
  EP_CHECK(t.shape[d] % major == 0, "split size");
  if (major % geo_.Tiles(t.spec.dims[d]) != 0) t = comm_.AllGather(std::move(t), dim, why + " (split dim)");
  const int64_t minor = t.shape[d] / major;
  t.shape[d] = major;
  t.shape.insert(t.shape.begin() + dim + 1, minor);
  t.spec.dims.insert(t.spec.dims.begin() + dim + 1, Entry{});
  for (HostTensor& x : t.local) {
    x.shape[d] /= minor;
    x.shape.insert(x.shape.begin() + dim + 1, minor);
  }
  return Track(std::move(t));
}

DistTensor Spmd::Merge(DistTensor t, int dim, const std::string& why) {
  const Nest nest(this);
  const size_t d = static_cast<size_t>(dim);
  if (!t.spec.dims[d + 1].empty()) t = comm_.AllGather(std::move(t), dim + 1, why + " (merged minor dim)");
  t.shape[d] *= t.shape[d + 1];
  t.shape.erase(t.shape.begin() + dim + 1);
  t.spec.dims.erase(t.spec.dims.begin() + dim + 1);
  for (HostTensor& x : t.local) {
    x.shape[d] *= x.shape[d + 1];
    x.shape.erase(x.shape.begin() + dim + 1);
  }
  return Track(std::move(t));
}

DistTensor Spmd::Narrow(DistTensor t, int dim, int64_t start, int64_t length, const std::string& why) {
  const Nest nest(this);
  const size_t d = static_cast<size_t>(dim);
  if (!t.spec.dims[d].empty()) t = comm_.AllGather(std::move(t), dim, why + " (sliced dim)");
  for (HostTensor& x : t.local) x = SliceDim(x, dim, start, length);
  t.shape[d] = length;
  return Track(std::move(t));
}

DistTensor Spmd::Broadcast(DistTensor t, int dim, int64_t size) const {
  const Nest nest(this);
  const size_t d = static_cast<size_t>(dim);
  EP_CHECK(t.shape[d] == 1 && t.spec.dims[d].empty(), "broadcast of a dim that is not size-1 and unsharded");
  for (HostTensor& x : t.local) {
    const std::vector<const HostTensor*> copies(static_cast<size_t>(size), &x);
    x = kernels::Concat(copies, dim);
  }
  t.shape[d] = size;
  return Track(std::move(t));
}

DistTensor Spmd::Concat(DistTensor a, DistTensor b, int dim, const std::string& why) {
  const Nest nest(this);
  const size_t d = static_cast<size_t>(dim);
  EP_CHECK(a.rank() == b.rank(), "concat ranks differ");
  a = Resolve(std::move(a), why + " (pending sum)");
  b = Resolve(std::move(b), why + " (pending sum)");
  if (!a.spec.dims[d].empty()) a = comm_.AllGather(std::move(a), dim, why + " (concatenated dim)");
  b = Reshard(std::move(b), a.spec, why + " (second part aligned to the first)");
  for (size_t dev = 0; dev < a.local.size(); ++dev) {
    a.local[dev] = kernels::Concat({&a.local[dev], &b.local[dev]}, dim);
  }
  a.shape[d] += b.shape[d];
  return Track(std::move(a));
}

DistTensor Spmd::Embed(DistTensor table, DistTensor ids, const std::string& why) {
  const Nest nest(this);
  table = Resolve(std::move(table), why);
  ids = Resolve(std::move(ids), why);
  const Entry id_axes = AxesOf(ids.spec, AllDims(ids.rank()));
  // The table's rows may stay sharded (a masked local lookup, then a sum) on axes the ids do not use; its
  // other dims become dims of the result, so they may not share axes with the ids either.
  DistSpec tt = table.spec;
  for (Entry& e : tt.dims) {
    if (Intersects(e, id_axes)) e.clear();
  }
  table = Reshard(std::move(table), tt, why + " (table axis used by the ids)");
  DistTensor out;
  out.shape = ids.shape;
  out.spec.dims = ids.spec.dims;
  for (int d = 1; d < table.rank(); ++d) {
    out.shape.push_back(table.shape[static_cast<size_t>(d)]);
    out.spec.dims.push_back(table.spec.dims[static_cast<size_t>(d)]);
  }
  out.spec.partial = table.spec.dims[0];
  std::sort(out.spec.partial.begin(), out.spec.partial.end());
  EP_CHECK(table.local.size() == ids.local.size(), "embedding lookup: the table and the ids on different devices");
  for (int64_t dev = 0; dev < static_cast<int64_t>(ids.local.size()); ++dev) {
    const HostTensor& tab = table.local[static_cast<size_t>(dev)];
    const HostTensor& id = ids.local[static_cast<size_t>(dev)];
    const Range rows = geo_.DimRange(geo_.LocalDevice(static_cast<size_t>(dev)), table.shape[0], table.spec.dims[0]);
    Dims shape = id.shape;
    shape.insert(shape.end(), tab.shape.begin() + 1, tab.shape.end());
    if (tab.meta || id.meta) {
      out.local.push_back(HostTensor::Meta(std::move(shape)));
      continue;
    }
    const int64_t width = tab.shape[0] == 0 ? 0 : tab.size() / tab.shape[0];  // one row's elements
    HostTensor x(shape);
    for (int64_t i = 0; i < id.size(); ++i) {
      const int64_t row = static_cast<int64_t>(id.data[static_cast<size_t>(i)]);
      if (row < rows.first || row >= rows.second) continue;  // another device's rows: contributes 0
      for (int64_t c = 0; c < width; ++c) {
        x.data[static_cast<size_t>(i * width + c)] = tab.data[static_cast<size_t>((row - rows.first) * width + c)];
      }
    }
    out.local.push_back(std::move(x));
  }
  const Operand rows{0, OperandOf(out).elements};  // the table rows it reads, one per output row
  return LogMemoryOp({rows}, Track(std::move(out)), why);
}

}  // namespace easyplan::kernels
