#include "kernels/collectives.h"

#include <algorithm>

#include "core/enum_table.h"
#include "kernels/stage_mesh.h"

namespace easyplan::kernels {

namespace {

// The collectives as reports name them.
constexpr EnumName<CollectiveKind> kCollectiveNames[] = {
    {CollectiveKind::kAllGather, "all-gather"}, {CollectiveKind::kReduceScatter, "reduce-scatter"},
    {CollectiveKind::kAllReduce, "all-reduce"}, {CollectiveKind::kAllToAll, "all-to-all"},
    {CollectiveKind::kSendRecv, "send/recv"},
};

}  // namespace

std::string_view CollectiveName(CollectiveKind kind) { return NameOf(kCollectiveNames, kind); }

namespace {

// The faults `check --inject` takes.
constexpr EnumName<Injection> kInjectionNames[] = {
    {Injection::kNone, "none"},
    {Injection::kCorruptShard, "corrupt-shard"},
    {Injection::kOffsetBlock, "offset-block"},
    {Injection::kDropAllReduce, "drop-all-reduce"},
    {Injection::kWrongDim, "wrong-dim"},
    {Injection::kSwapTupleOrder, "swap-tuple-order"},
    {Injection::kDropStageSend, "drop-stage-send"},
};

}  // namespace

std::string_view InjectionName(Injection injection) { return NameOf(kInjectionNames, injection); }

std::optional<Injection> ParseInjectionName(std::string_view text) { return ParseEnum(kInjectionNames, text); }

int64_t CommLog::Bytes(CollectiveKind kind, std::string_view scope) const {
  int64_t total = 0;
  for (const CommRecord& r : records) {
    if (r.kind == kind && r.backward != CommRecord::Backward::kOnly && (scope.empty() || r.scope == scope)) {
      total += r.bytes_per_device;
    }
  }
  return total;
}

int64_t CommLog::ExpectedBytes(CollectiveKind kind, std::string_view scope) const {
  int64_t total = 0;
  for (const CommRecord& r : records) {
    if (r.kind == kind && r.backward != CommRecord::Backward::kOnly && (scope.empty() || r.scope == scope)) {
      total += r.expected_bytes >= 0 ? r.expected_bytes : r.bytes_per_device;
    }
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

namespace {

int64_t BlockElements(const DistTensor& t) { return t.local.empty() ? 0 : t.local[0].size(); }

}  // namespace

Collectives::Collectives(const MeshGeometry& geo, int64_t bytes_per_element, CommLog* log, Injection injection)
    : owned_(MakeInProcessTransport(geo)),
      transport_(*owned_),
      geo_(geo),
      bytes_per_element_(bytes_per_element),
      log_(log),
      injection_(injection) {}

Collectives::Collectives(Transport& transport, int64_t bytes_per_element, CommLog* log, Injection injection)
    : transport_(transport),
      geo_(transport.geo()),
      bytes_per_element_(bytes_per_element),
      log_(log),
      injection_(injection) {}

bool Collectives::Uniform(const DistTensor& t) const {
  if (t.local.size() != 1 || geo_.local_devices() == 1) return false;
  EP_CHECK(t.local[0].meta, "a single block stands for every device only in a dry run (shape-only tensors)");
  return true;
}

void Collectives::Record(CollectiveKind kind, const std::string& why, const DistTensor& t, const std::vector<int>& axes,
                         int64_t group, int64_t block) {
  // Bytes, then the ring factor (in this order, so every engine rounds alike).
  const int64_t s = block * bytes_per_element_;
  int64_t bytes = 0;
  switch (kind) {
    case CollectiveKind::kAllGather:
      bytes = (group - 1) * s;
      break;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
      bytes = (group - 1) * s / group;
      break;
    case CollectiveKind::kAllReduce:
      bytes = 2 * (group - 1) * s / group;
      break;
    case CollectiveKind::kSendRecv:
      bytes = s;
      break;
  }
  RecordBytes(kind, why, t, axes, group, bytes);
}

void Collectives::RecordBytes(CollectiveKind kind, const std::string& why, const DistTensor& t,
                              const std::vector<int>& axes, int64_t group, int64_t bytes) {
  log_->records.push_back(CommRecord{kind, scope_, why, t.spec.ToString(geo_.mesh()), group, bytes, t.parameter, axes});
  log_->records.back().stage = stage_;
}

std::string Collectives::Describe(CollectiveKind kind, const std::vector<int>& axes, const std::string& why) const {
  std::string names;
  for (int a : axes) names += (names.empty() ? "" : ", ") + geo_.mesh().axis_names[static_cast<size_t>(a)];
  return std::string(CollectiveName(kind)) + " over (" + names + ") in " + (scope_.empty() ? "setup" : scope_) + ": " +
         why;
}

DistTensor Collectives::AllGather(DistTensor t, int dim, const std::string& why) {
  const std::vector<int> axes = t.spec.dims[static_cast<size_t>(dim)];
  const int64_t g = geo_.Tiles(axes);
  if (g > 1 && Uniform(t)) {
    Record(CollectiveKind::kAllGather, why, t, axes, g, BlockElements(t));
    t.local[0].shape[static_cast<size_t>(dim)] *= g;
  } else if (g > 1) {
    const DistTensor before{t.shape, t.spec, {}, nullptr, t.parameter};
    const int64_t block = transport_.AllGather(t.local, axes, dim, Describe(CollectiveKind::kAllGather, axes, why));
    Record(CollectiveKind::kAllGather, why, before, axes, g, block);
  }
  t.spec.dims[static_cast<size_t>(dim)].clear();
  return t;
}

DistTensor Collectives::AllReduce(DistTensor t, const std::vector<int>& axes, ReduceOp op, const std::string& why) {
  const int64_t g = geo_.Tiles(axes);
  if (g > 1) {
    const bool drop = injection_ == Injection::kDropAllReduce && op == ReduceOp::kSum && log_->dropped_all_reduces == 0;
    if (drop) ++log_->dropped_all_reduces;
    int64_t block = BlockElements(t);  // what a dropped or shape-only all-reduce would have handed over
    if (!drop && !Uniform(t)) {        // a uniform block is shape-only: the sum keeps its shape
      block = transport_.AllReduce(t.local, axes, op, Describe(CollectiveKind::kAllReduce, axes, why));
    }
    Record(CollectiveKind::kAllReduce, why, t, axes, g, block);
  }
  std::vector<int>& partial = t.spec.partial;
  for (int a : axes) partial.erase(std::remove(partial.begin(), partial.end(), a), partial.end());
  return t;
}

DistTensor Collectives::ReduceScatter(DistTensor t, const std::vector<int>& axes, int dim, const std::string& why) {
  const int64_t g = geo_.Tiles(axes);
  const size_t d = static_cast<size_t>(dim);
  if (g > 1 && Uniform(t)) {
    Record(CollectiveKind::kReduceScatter, why, t, axes, g, BlockElements(t));
    t.local[0].shape[d] /= g;
  } else if (g > 1) {
    const DistTensor before{t.shape, t.spec, {}, nullptr, t.parameter};
    const int64_t block =
        transport_.ReduceScatter(t.local, axes, dim, Describe(CollectiveKind::kReduceScatter, axes, why));
    Record(CollectiveKind::kReduceScatter, why, before, axes, g, block);
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
  if (g > 1 && Uniform(t)) {
    Record(CollectiveKind::kAllToAll, why, t, axes, g, BlockElements(t));
    t.local[0].shape[static_cast<size_t>(from)] *= g;
    t.local[0].shape[static_cast<size_t>(to)] /= g;
  } else if (g > 1) {
    const DistTensor before{t.shape, t.spec, {}, nullptr, t.parameter};
    const int64_t block = transport_.AllToAll(t.local, axes, from, to, Describe(CollectiveKind::kAllToAll, axes, why));
    Record(CollectiveKind::kAllToAll, why, before, axes, g, block);
  }
  t.spec.dims[static_cast<size_t>(from)].clear();
  for (int a : axes) t.spec.dims[static_cast<size_t>(to)].push_back(a);
  return t;
}

DistTensor Collectives::RaggedAllToAll(DistTensor t, const std::vector<int>& axes,
                                       const std::vector<int64_t>& received_rows, int64_t expected_rows,
                                       int64_t row_elements, const std::string& why) {
  const int64_t g = geo_.Tiles(axes);
  if (g > 1) {
    if (!Uniform(t))
      transport_.AllReduce(t.local, axes, ReduceOp::kSum, Describe(CollectiveKind::kAllToAll, axes, why));
    // What moves is rows, not the buffer: the busiest device's received rows, over every process (the
    // root reports; the other processes keep their own devices' figure).
    int64_t rows = received_rows.empty() ? expected_rows : 0;
    if (!received_rows.empty()) {
      const std::vector<int64_t> every = transport_.GatherValues(received_rows);
      for (int64_t r : every.empty() ? received_rows : every) rows = std::max(rows, r);
    }
    RecordBytes(CollectiveKind::kAllToAll, why, t, axes, g, rows * row_elements * bytes_per_element_);
    log_->records.back().expected_bytes = expected_rows * row_elements * bytes_per_element_;
  }
  std::vector<int>& partial = t.spec.partial;
  for (int a : axes) partial.erase(std::remove(partial.begin(), partial.end(), a), partial.end());
  return t;
}

CommRecord StageSendRecord(const Dims& shape, const DistSpec& spec, const MeshGeometry& stage, int pp_axis,
                           int64_t from, int64_t to, std::string scope, std::string why, int64_t bytes_per_element) {
  int64_t block = 1;
  for (int64_t d : BlockShape(shape, spec, stage)) block *= d;
  CommRecord r{CollectiveKind::kSendRecv,
               std::move(scope),
               std::move(why),
               spec.ToString(stage.mesh()),
               2,
               block * bytes_per_element,
               false,
               {pp_axis}};
  r.stage = from;
  r.to_stage = to;
  return r;
}

DistTensor Collectives::SendToStage(DistTensor t, int pp_axis, int64_t from, int64_t to, const std::string& why) {
  EP_CHECK(t.spec.partial.empty(), "a pipeline stage boundary sends a resolved tensor");
  const MeshGeometry stage(StageMesh(geo_.mesh(), pp_axis));
  std::vector<HostTensor> received;
  transport_.SendRecv(t.local, received, BlockShape(t.shape, t.spec, stage), pp_axis, from, to,
                      Describe(CollectiveKind::kSendRecv, {pp_axis}, why));
  if (injection_ == Injection::kDropStageSend && log_->dropped_sends == 0) {
    ++log_->dropped_sends;  // the send does not arrive: the next stage starts from zeros
    for (HostTensor& b : received) std::fill(b.data.begin(), b.data.end(), 0.0);
  }
  log_->records.push_back(StageSendRecord(t.shape, t.spec, stage, pp_axis, from, to, scope_, why, bytes_per_element_));
  t.local = std::move(received);
  t.live.reset();
  t.value_id = 0;
  return t;
}

void Collectives::BackwardAllReduce(const DistTensor& t, const std::vector<int>& axes, int64_t block,
                                    const std::string& why) {
  const int64_t g = geo_.Tiles(axes);
  if (g <= 1 || log_ == nullptr) return;
  Record(CollectiveKind::kAllReduce, why, t, axes, g, block);
  log_->records.back().backward = CommRecord::Backward::kOnly;
}

}  // namespace easyplan::kernels
