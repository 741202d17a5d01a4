#include "kernels/collectives.h"

#include <algorithm>

namespace easyplan::kernels {

std::string_view CollectiveName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllGather:
      return "all-gather";
    case CollectiveKind::kReduceScatter:
      return "reduce-scatter";
    case CollectiveKind::kAllReduce:
      return "all-reduce";
    case CollectiveKind::kAllToAll:
      return "all-to-all";
  }
  return "?";
}

std::string_view InjectionName(Injection injection) {
  switch (injection) {
    case Injection::kNone:
      return "none";
    case Injection::kCorruptShard:
      return "corrupt-shard";
    case Injection::kOffsetBlock:
      return "offset-block";
    case Injection::kDropAllReduce:
      return "drop-all-reduce";
    case Injection::kWrongDim:
      return "wrong-dim";
    case Injection::kSwapTupleOrder:
      return "swap-tuple-order";
  }
  return "?";
}

int64_t CommLog::Bytes(CollectiveKind kind, std::string_view scope) const {
  int64_t total = 0;
  for (const CommRecord& r : records) {
    if (r.kind == kind && (scope.empty() || r.scope == scope)) total += r.bytes_per_device;
  }
  return total;
}

std::vector<std::string> CommLog::Scopes() const {
  std::vector<std::string> scopes;
  for (const CommRecord& r : records) {
    if (std::find(scopes.begin(), scopes.end(), r.scope) == scopes.end()) scopes.push_back(r.scope);
  }
  return scopes;
}

Collectives::Collectives(const MeshGeometry& geo, int64_t bytes_per_element, CommLog* log, Injection injection)
    : geo_(geo), bytes_per_element_(bytes_per_element), log_(log), injection_(injection) {}

bool Collectives::Uniform(const DistTensor& t) const {
  if (t.local.size() != 1 || geo_.devices() == 1) return false;
  EP_CHECK(t.local[0].meta, "a single block stands for every device only in a dry run (shape-only tensors)");
  return true;
}

int64_t Collectives::LocalBytes(const DistTensor& t) const {
  return t.local.empty() ? 0 : t.local[0].size() * bytes_per_element_;
}

void Collectives::Record(CollectiveKind kind, const std::string& why, const DistTensor& t, const std::vector<int>& axes,
                         int64_t group, int64_t bytes) {
  log_->records.push_back(CommRecord{kind, scope_, why, t.spec.ToString(geo_.mesh()), group, bytes, t.parameter, axes});
}

DistTensor Collectives::AllGather(DistTensor t, int dim, const std::string& why) {
  const std::vector<int> axes = t.spec.dims[static_cast<size_t>(dim)];
  const int64_t g = geo_.Tiles(axes);
  if (g > 1) {
    Record(CollectiveKind::kAllGather, why, t, axes, g, (g - 1) * LocalBytes(t));
  }
  if (g > 1 && Uniform(t)) {
    t.local[0].shape[static_cast<size_t>(dim)] *= g;
  } else if (g > 1) {
    std::vector<HostTensor> out(t.local.size());
    for (const std::vector<int64_t>& group : geo_.Groups(axes)) {
      std::vector<const HostTensor*> parts;
      for (int64_t m : group) parts.push_back(&t.local[static_cast<size_t>(m)]);
      const HostTensor full = Concat(parts, dim);
      for (int64_t m : group) out[static_cast<size_t>(m)] = full;
    }
    t.local = std::move(out);
  }
  t.spec.dims[static_cast<size_t>(dim)].clear();
  return t;
}

DistTensor Collectives::AllReduce(DistTensor t, const std::vector<int>& axes, ReduceOp op, const std::string& why) {
  const int64_t g = geo_.Tiles(axes);
  bool drop = false;
  if (g > 1) {
    Record(CollectiveKind::kAllReduce, why, t, axes, g, 2 * (g - 1) * LocalBytes(t) / g);
    drop = injection_ == Injection::kDropAllReduce && op == ReduceOp::kSum && log_->dropped_all_reduces == 0;
    if (drop) ++log_->dropped_all_reduces;
  }
  if (g > 1 && !drop && !Uniform(t)) {  // a uniform block is shape-only: the sum keeps its shape
    for (const std::vector<int64_t>& group : geo_.Groups(axes)) {
      HostTensor acc = t.local[static_cast<size_t>(group[0])];
      for (size_t i = 1; i < group.size(); ++i) {
        const HostTensor& x = t.local[static_cast<size_t>(group[i])];
        for (size_t e = 0; e < acc.data.size(); ++e) {
          acc.data[e] = op == ReduceOp::kSum ? acc.data[e] + x.data[e] : std::max(acc.data[e], x.data[e]);
        }
      }
      for (int64_t m : group) t.local[static_cast<size_t>(m)] = acc;
    }
  }
  std::vector<int>& partial = t.spec.partial;
  for (int a : axes) partial.erase(std::remove(partial.begin(), partial.end(), a), partial.end());
  return t;
}

DistTensor Collectives::ReduceScatter(DistTensor t, const std::vector<int>& axes, int dim, const std::string& why) {
  const int64_t g = geo_.Tiles(axes);
  const size_t d = static_cast<size_t>(dim);
  if (g > 1) {
    Record(CollectiveKind::kReduceScatter, why, t, axes, g, (g - 1) * LocalBytes(t) / g);
  }
  if (g > 1 && Uniform(t)) {
    t.local[0].shape[d] /= g;
  } else if (g > 1) {
    for (const std::vector<int64_t>& group : geo_.Groups(axes)) {
      HostTensor acc = t.local[static_cast<size_t>(group[0])];
      for (size_t i = 1; i < group.size(); ++i) {
        const HostTensor& x = t.local[static_cast<size_t>(group[i])];
        for (size_t e = 0; e < acc.data.size(); ++e) acc.data[e] += x.data[e];
      }
      const int64_t length = acc.shape[d] / g;
      for (size_t i = 0; i < group.size(); ++i) {
        std::vector<Range> box;
        for (int64_t s : acc.shape) box.emplace_back(0, s);
        box[d] = {static_cast<int64_t>(i) * length, static_cast<int64_t>(i + 1) * length};
        t.local[static_cast<size_t>(group[i])] = SliceBox(acc, box);
      }
    }
  }
  std::vector<int>& partial = t.spec.partial;
  for (int a : axes) {
    partial.erase(std::remove(partial.begin(), partial.end(), a), partial.end());
    t.spec.dims[d].push_back(a);
  }
  return t;
}

DistTensor Collectives::AllToAll(DistTensor t, int from, int to, const std::string& why) {
  const std::vector<int> axes = t.spec.dims[static_cast<size_t>(from)];
  const int64_t g = geo_.Tiles(axes);
  if (g > 1) {
    Record(CollectiveKind::kAllToAll, why, t, axes, g, (g - 1) * LocalBytes(t) / g);
  }
  if (g > 1 && Uniform(t)) {
    t.local[0].shape[static_cast<size_t>(from)] *= g;
    t.local[0].shape[static_cast<size_t>(to)] /= g;
  } else if (g > 1) {
    std::vector<HostTensor> out(t.local.size());
    for (const std::vector<int64_t>& group : geo_.Groups(axes)) {
      std::vector<const HostTensor*> parts;
      for (int64_t m : group) parts.push_back(&t.local[static_cast<size_t>(m)]);
      const HostTensor joined = Concat(parts, from);
      const int64_t length = joined.shape[static_cast<size_t>(to)] / g;
      for (size_t i = 0; i < group.size(); ++i) {
        std::vector<Range> box;
        for (int64_t s : joined.shape) box.emplace_back(0, s);
        box[static_cast<size_t>(to)] = {static_cast<int64_t>(i) * length, static_cast<int64_t>(i + 1) * length};
        out[static_cast<size_t>(group[i])] = SliceBox(joined, box);
      }
    }
    t.local = std::move(out);
  }
  t.spec.dims[static_cast<size_t>(from)].clear();
  for (int a : axes) t.spec.dims[static_cast<size_t>(to)].push_back(a);
  return t;
}

}  // namespace easyplan::kernels
