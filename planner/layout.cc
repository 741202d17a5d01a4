#include "planner/layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>

#include "core/checked_math.h"
#include "core/enum_table.h"

namespace easyplan::planner {
namespace {

using Entry = PartitionSpec::Entry;

constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();

// ---- Python reprs, so messages read exactly as JAX prints them ----

// Python's tuple repr: "(8, 3)", "(8,)" for one element, "()" for none.
std::string PyTuple(const std::vector<std::string>& items) {
  if (items.size() == 1) return "(" + items[0] + ",)";
  return "(" + fmt::format("{}", fmt::join(items, ", ")) + ")";
}

std::string PyIntTuple(std::span<const int64_t> values) {
  std::vector<std::string> items;
  for (int64_t v : values) items.push_back(std::to_string(v));
  return PyTuple(items);
}

// "('dp', 'fsdp', 'tp')": `tuple(mesh.shape.keys())` in JAX's unknown-axis message.
std::string PyAxisNames(const Mesh& mesh) {
  std::vector<std::string> quoted;
  for (const std::string& name : mesh.axis_names) quoted.push_back("'" + name + "'");
  return PyTuple(quoted);
}

// "Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto))": jax.sharding.Mesh's repr with default axis types.
std::string PyMesh(const Mesh& mesh) {
  std::vector<std::string> sizes;
  std::vector<std::string> types;
  for (int k = 0; k < mesh.rank(); ++k) {
    sizes.push_back(fmt::format("'{}': {}", mesh.axis_names[k], mesh.shape[k]));
    types.push_back("Auto");
  }
  return fmt::format("Mesh({}, axis_types={})", fmt::join(sizes, ", "), PyTuple(types));
}

std::string PyNamedSharding(const Mesh& mesh, const PartitionSpec& spec) {
  return "NamedSharding(mesh=" + PyMesh(mesh) + ", spec=" + spec.ToString() + ")";
}

// "'fsdp'" or "('fsdp', 'sp')": one entry as it appears inside a P(...) repr.
std::string EntryRepr(const Entry& entry) {
  std::string spec = PartitionSpec({entry}).ToString();
  return spec.substr(2, spec.size() - 3);  // strip "P(" and ")"
}

// "fsdp=4 x sp=2": the sizes behind an entry's tiling factor.
std::string EntrySizes(const Entry& entry, const Mesh& mesh) {
  std::vector<std::string> parts;
  for (const std::string& axis : entry) {
    std::optional<int> k = mesh.AxisIndex(axis);
    parts.push_back(fmt::format("{}={}", axis, k ? mesh.shape[static_cast<size_t>(*k)] : 1));
  }
  return fmt::format("{}", fmt::join(parts, " x "));
}

// ---- spec correction steps ----

// Product of the entry's axis sizes. Saturates instead of overflowing: only a spec repeating an axis
// (already an error) can get there, and a saturated factor divides no nonzero dim.
int64_t TilingFactor(const Entry& entry, const Mesh& mesh) {
  int64_t factor = 1;
  for (const std::string& axis : entry) {
    std::optional<int> k = mesh.AxisIndex(axis);
    if (!k) continue;  // unknown axes are dropped before the factor matters
    std::optional<int64_t> next = CheckedMul(factor, mesh.shape[static_cast<size_t>(*k)]);
    factor = next ? *next : kSaturated;
  }
  return factor;
}

bool Divides(int64_t factor, int64_t size) { return size % factor == 0; }

void Truncate(const Shape& shape, std::vector<Entry>* entries, std::vector<SpecIssue>* issues) {
  const size_t rank = static_cast<size_t>(shape.rank());
  if (entries->size() <= rank) return;
  PartitionSpec written(*entries);
  entries->resize(rank);
  SpecIssue issue{.kind = SpecIssue::Kind::kTruncated};
  issue.message = fmt::format("{} has {} entries for a rank-{} tensor of shape {}; truncated to {}", written.ToString(),
                              written.size(), rank, shape.ToString(), PartitionSpec(*entries).ToString());
  issues->push_back(std::move(issue));
}

// JAX's _check_mesh_resource_axis, one issue per unknown name (JAX stops at the first); eformer's
// corrector then replaces the whole entry with None.
void DropUnknownAxes(const Mesh& mesh, std::vector<Entry>* entries, std::vector<SpecIssue>* issues) {
  const std::string written = PartitionSpec(*entries).ToString();
  for (size_t dim = 0; dim < entries->size(); ++dim) {
    Entry& entry = (*entries)[dim];
    bool unknown = false;
    for (const std::string& axis : entry) {
      if (mesh.AxisIndex(axis)) continue;
      unknown = true;
      SpecIssue issue{.kind = SpecIssue::Kind::kUnknownAxis, .dim = static_cast<int>(dim), .axis = axis};
      issue.message =
          fmt::format("Resource axis: {} of {} is not found in mesh: {}.", axis, written, PyAxisNames(mesh));
      issues->push_back(std::move(issue));
    }
    if (unknown) entry.clear();
  }
}

// JAX's _check_unique_resources: the message lists every repeated axis, sorted as show_axes sorts
// the back-quoted names. One issue per repeated axis, at the dim of its second use.
void CheckDuplicates(const std::vector<Entry>& entries, std::vector<SpecIssue>* issues) {
  std::vector<std::pair<std::string, int>> repeated;  // axis, dim of its second use
  std::unordered_map<std::string, int> uses;
  for (size_t dim = 0; dim < entries.size(); ++dim) {
    for (const std::string& axis : entries[dim]) {
      if (++uses[axis] == 2) repeated.emplace_back(axis, static_cast<int>(dim));
    }
  }
  if (repeated.empty()) return;
  std::vector<std::string> shown;
  for (const auto& [axis, dim] : repeated) shown.push_back("`" + axis + "`");
  std::sort(shown.begin(), shown.end());
  const std::string message = fmt::format(
      "A single NamedSharding spec specification can map every mesh axis to at most one positional dimension, but "
      "{} has duplicate entries for {}",
      PartitionSpec(entries).ToString(), fmt::join(shown, ", "));
  for (const auto& [axis, dim] : repeated) {
    issues->push_back(SpecIssue{.kind = SpecIssue::Kind::kDuplicateAxis, .dim = dim, .axis = axis, .message = message});
  }
}

// jax/_src/sharding.py's IndivisibleError text; the tiling factors cover every dim of the tensor.
std::string IndivisibleMessage(const Shape& shape, const std::vector<Entry>& entries, const Mesh& mesh, int dim) {
  std::vector<int64_t> factors(static_cast<size_t>(shape.rank()), 1);
  for (size_t d = 0; d < entries.size(); ++d) factors[d] = TilingFactor(entries[d], mesh);
  const std::vector<int64_t> dims(shape.dims().begin(), shape.dims().end());
  return fmt::format(
      "{} implies that array axis {} is partitioned {} times, but the dimension size is {} (full shape: {}, "
      "per-dimension tiling factors: {} should evenly divide the shape)",
      PyNamedSharding(mesh, PartitionSpec(entries)), dim, factors[static_cast<size_t>(dim)], shape[dim],
      PyIntTuple(dims), PyIntTuple(factors));
}

SpecIssue UnevenIssue(SpecIssue::Kind kind, int dim, int64_t dim_size, int64_t factor, std::string message) {
  return SpecIssue{.kind = kind, .dim = dim, .dim_size = dim_size, .partitions = factor, .message = std::move(message)};
}

void ApplyUnevenRule(const Shape& shape, const Mesh& mesh, UnevenMode mode, std::vector<Entry>* entries,
                     std::vector<SpecIssue>* issues) {
  const std::vector<Entry> written = *entries;  // messages quote the spec before replacements
  for (size_t d = 0; d < written.size(); ++d) {
    const int dim = static_cast<int>(d);
    const int64_t factor = TilingFactor(written[d], mesh);
    if (written[d].empty() || Divides(factor, shape[dim])) continue;
    const std::string what = fmt::format("dim {} of size {} is not divisible by {} = {} ({})", dim, shape[dim],
                                         EntryRepr(written[d]), factor, EntrySizes(written[d], mesh));
    switch (mode) {
      case UnevenMode::kReplicate:
        (*entries)[d].clear();  // eformer drops the whole tuple, never a part of it
        issues->push_back(UnevenIssue(SpecIssue::Kind::kUnevenReplaced, dim, shape[dim], factor,
                                      what + "; the entry becomes None and the dim is replicated"));
        break;
      case UnevenMode::kError:
        issues->push_back(UnevenIssue(SpecIssue::Kind::kIndivisible, dim, shape[dim], factor,
                                      IndivisibleMessage(shape, written, mesh, dim)));
        break;
      case UnevenMode::kChunk:
        issues->push_back(UnevenIssue(SpecIssue::Kind::kUnevenChunked, dim, shape[dim], factor,
                                      what + "; chunked as torch.chunk, so trailing shards are smaller or empty"));
        break;
    }
  }
}

// get_corrected_named_sharding pads to the rank, and an all-None result is P().
void PadAndCollapse(const Shape& shape, std::vector<Entry>* entries) {
  entries->resize(static_cast<size_t>(shape.rank()));
  if (PartitionSpec(*entries).IsReplicated()) entries->clear();
}

// ---- layout helpers ----

// torch's Shard.local_shard_size_and_offset: (size, offset) of chunk `index` of `size` split `n` ways.
Range LocalChunk(int64_t size, int64_t n, int64_t index) {
  if (size % n == 0) return {size / n, size / n * index};
  const int64_t chunk = size / n + 1;
  // torch's `size < start` test, by division so that chunk * index cannot overflow.
  if (index > size / chunk) return {0, size};
  const int64_t start = chunk * index;
  return {std::min(size - start, chunk), start};
}

int64_t CeilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// The modes `--uneven` takes.
constexpr EnumName<UnevenMode> kUnevenModeNames[] = {
    {UnevenMode::kReplicate, "replicate"},
    {UnevenMode::kError, "error"},
    {UnevenMode::kChunk, "chunk"},
};

}  // namespace

std::string_view UnevenModeName(UnevenMode mode) { return NameOf(kUnevenModeNames, mode); }

std::optional<UnevenMode> ParseUnevenMode(std::string_view text) { return ParseEnum(kUnevenModeNames, text); }

Severity SpecIssueSeverity(SpecIssue::Kind kind) {
  switch (kind) {
    case SpecIssue::Kind::kUnknownAxis:
    case SpecIssue::Kind::kDuplicateAxis:
    case SpecIssue::Kind::kIndivisible:
      return Severity::kError;
    case SpecIssue::Kind::kTruncated:
    case SpecIssue::Kind::kUnevenReplaced:
      return Severity::kWarning;
    case SpecIssue::Kind::kUnevenChunked:
      return Severity::kNote;
  }
  return Severity::kError;
}

bool CorrectedSpec::HasError() const {
  for (const SpecIssue& issue : issues) {
    if (SpecIssueSeverity(issue.kind) == Severity::kError) return true;
  }
  return false;
}

CorrectedSpec CorrectSpec(const Shape& shape, const PartitionSpec& spec, const Mesh& mesh, UnevenMode mode) {
  CorrectedSpec out;
  if (shape.rank() == 0) return out;  // match_partition_rules: scalars are never sharded, silently
  std::vector<Entry> entries = spec.entries();
  Truncate(shape, &entries, &out.issues);
  // Both checks look at the truncated spec as written, which is what JAX's check_pspec sees.
  const std::vector<Entry> written = entries;
  DropUnknownAxes(mesh, &entries, &out.issues);
  CheckDuplicates(written, &out.issues);
  ApplyUnevenRule(shape, mesh, mode, &entries, &out.issues);
  if (mode == UnevenMode::kReplicate) PadAndCollapse(shape, &entries);
  out.spec = PartitionSpec(std::move(entries));
  return out;
}

StatusOr<TensorLayout> TensorLayout::Make(const Shape& shape, const PartitionSpec& spec, const Mesh& mesh,
                                          UnevenMode mode) {
  const std::string where =
      fmt::format("TensorLayout {} on [{}] for shape {}", spec.ToString(), mesh.ToString(), shape.ToString());
  if (spec.size() > shape.rank()) return Status::Internal(where + ": the spec has more entries than the rank");
  if (!shape.NumElements()) return Status::BadInput({}, "shape " + shape.ToString() + " has more than 2^63-1 elements");
  std::optional<int64_t> devices = CheckedProduct(mesh.shape);
  if (!devices || *devices < 1) return Status::Internal(where + ": the mesh size is invalid");

  TensorLayout layout;
  layout.shape_ = shape;
  layout.mesh_shape_ = mesh.shape;
  layout.num_devices_ = *devices;
  layout.mode_ = mode;
  const size_t rank = static_cast<size_t>(shape.rank());
  layout.dim_axes_.resize(rank);
  layout.tiles_.assign(rank, 1);

  // A name -> index map keeps Make linear in the number of axes.
  std::unordered_map<std::string_view, int> axis_index;
  for (int k = 0; k < mesh.rank(); ++k) axis_index.emplace(mesh.axis_names[static_cast<size_t>(k)], k);
  std::vector<bool> used(mesh.shape.size(), false);
  for (size_t d = 0; d < static_cast<size_t>(spec.size()); ++d) {
    for (const std::string& axis : spec[static_cast<int>(d)]) {
      auto it = axis_index.find(axis);
      if (it == axis_index.end()) return Status::Internal(where + ": unknown mesh axis '" + axis + "'");
      const size_t k = static_cast<size_t>(it->second);
      if (used[k]) return Status::Internal(where + ": mesh axis '" + axis + "' is used twice");
      used[k] = true;
      layout.dim_axes_[d].push_back(it->second);
      layout.tiles_[d] *= mesh.shape[k];  // distinct axes: bounded by the device count
    }
  }
  for (int k = 0; k < mesh.rank(); ++k) {
    if (used[static_cast<size_t>(k)]) continue;
    layout.unused_axes_.push_back(k);
    layout.replicas_ *= mesh.shape[static_cast<size_t>(k)];
  }

  std::vector<int64_t> shard(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t size = shape[static_cast<int>(d)];
    if (size % layout.tiles_[d] != 0) {
      if (mode != UnevenMode::kChunk) {
        return Status::Internal(
            fmt::format("{}: dim {} of size {} is not divisible by {}", where, d, size, layout.tiles_[d]));
      }
      layout.even_ = false;
    }
    // Nested torch chunks lead with ceil at every level, and ceil(ceil(n/a)/b) == ceil(n/(a*b)).
    shard[d] = CeilDiv(size, layout.tiles_[d]);
  }
  layout.shard_shape_ = Shape(std::move(shard));
  return layout;
}

std::vector<int64_t> TensorLayout::CoordinatesOf(int64_t device) const {
  EP_CHECK(device >= 0 && device < num_devices_, "device " + std::to_string(device) + " is not in the mesh");
  std::vector<int64_t> coords(mesh_shape_.size());
  for (size_t k = mesh_shape_.size(); k-- > 0;) {
    coords[k] = device % mesh_shape_[k];
    device /= mesh_shape_[k];
  }
  return coords;
}

Range TensorLayout::DimRange(int dim, const std::vector<int64_t>& coords) const {
  const int64_t size = shape_[dim];
  const std::vector<int>& axes = dim_axes_[static_cast<size_t>(dim)];
  if (mode_ != UnevenMode::kChunk || size % tiles_[static_cast<size_t>(dim)] == 0) {
    // Equal blocks; the block index is the mixed-radix number of the coordinates, first axis major.
    int64_t block = 0;
    for (int k : axes) block = block * mesh_shape_[static_cast<size_t>(k)] + coords[static_cast<size_t>(k)];
    const int64_t length = size / tiles_[static_cast<size_t>(dim)];
    return {block * length, block * length + length};
  }
  // DTensor: each axis chunks the current local piece; an empty piece reports the global size.
  int64_t local = size;
  int64_t offset = 0;
  for (int k : axes) {
    const auto [length, start] = LocalChunk(local, mesh_shape_[static_cast<size_t>(k)], coords[static_cast<size_t>(k)]);
    if (length == 0) return {size, size};
    local = length;
    offset += start;
  }
  return {offset, offset + local};
}

std::vector<Range> TensorLayout::SliceOf(int64_t device) const {
  const std::vector<int64_t> coords = CoordinatesOf(device);
  std::vector<Range> ranges;
  ranges.reserve(dim_axes_.size());
  for (int d = 0; d < shape_.rank(); ++d) ranges.push_back(DimRange(d, coords));
  return ranges;
}

int64_t TensorLayout::ReplicaId(int64_t device) const {
  // Devices sharing a block differ only on the unnamed axes; in mesh-flat order they are visited in
  // the mixed-radix order of those coordinates.
  const std::vector<int64_t> coords = CoordinatesOf(device);
  int64_t id = 0;
  for (int k : unused_axes_) id = id * mesh_shape_[static_cast<size_t>(k)] + coords[static_cast<size_t>(k)];
  return id;
}

int64_t TensorLayout::ElementsOn(int64_t device) const {
  // Every range lies inside its dim and Make checked the shape's element count, so no overflow.
  int64_t elements = 1;
  for (const Range& range : SliceOf(device)) elements *= range.second - range.first;
  return elements;
}

}  // namespace easyplan::planner
