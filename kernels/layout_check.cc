#include "kernels/layout_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "core/checked_math.h"
#include "kernels/dist_tensor.h"

namespace easyplan::kernels {
namespace {

using planner::LayoutGroup;
using planner::TensorLayout;

std::string RangesText(const std::vector<Range>& ranges) {
  std::vector<std::string> parts;
  for (const Range& r : ranges) parts.push_back(fmt::format("{}:{}", r.first, r.second));
  return "[" + fmt::format("{}", fmt::join(parts, ", ")) + "]";
}

// This module's own reading of a spec: NamedSharding blocks for even dims, torch.chunk nested per axis
// (DTensor) for uneven ones; an empty chunk reports the dim size as its start.
std::vector<Range> ReferenceSlice(const MeshGeometry& geo, const Shape& shape, const DistSpec& spec, int64_t device) {
  std::vector<Range> out;
  for (int d = 0; d < shape.rank(); ++d) {
    const std::vector<int>& axes = spec.dims[static_cast<size_t>(d)];
    const int64_t size = shape[d];
    if (size % geo.Tiles(axes) == 0) {
      out.push_back(geo.DimRange(device, size, axes));
      continue;
    }
    int64_t local = size, offset = 0;
    bool empty = false;
    for (int a : axes) {
      const int64_t n = geo.AxisSize(a);
      const int64_t chunk = (local + n - 1) / n;
      const int64_t start = chunk * geo.Coord(device, a);
      if (start >= local) {
        empty = true;
        break;
      }
      local = std::min(local - start, chunk);
      offset += start;
    }
    out.push_back(empty ? Range{size, size} : Range{offset, offset + local});
  }
  return out;
}

// The group whose layout an injection replaces, and the replacement.
struct Mutation {
  int group = -1;
  std::optional<TensorLayout> layout;  // kSwapTupleOrder, kWrongDim
  int dim = -1;                        // kOffsetBlock: the dim shifted on one device
  int64_t device = -1;
};

Mutation PlanMutation(const planner::Plan& plan, const std::vector<const planner::ParamPlan*>& first,
                      Injection injection) {
  Mutation m;
  if (injection != Injection::kOffsetBlock && injection != Injection::kSwapTupleOrder &&
      injection != Injection::kWrongDim) {
    return m;
  }
  for (size_t g = 0; g < plan.groups.size() && m.group < 0; ++g) {
    const LayoutGroup& group = plan.groups[g];
    const TensorLayout& layout = group.layout;
    if (!first[g] || group.expert_layout) continue;
    const PartitionSpec& spec = first[g]->effective;
    for (int d = 0; d < spec.size() && m.group < 0; ++d) {
      if (layout.tiles()[static_cast<size_t>(d)] <= 1) continue;
      if (injection == Injection::kOffsetBlock) {
        m.group = static_cast<int>(g);
        m.dim = d;
        m.device = 0;
      } else if (injection == Injection::kSwapTupleOrder) {
        std::vector<std::string> entry = spec[d];
        int big = 0;
        for (const std::string& axis : entry)
          big += plan.mesh.shape[static_cast<size_t>(*plan.mesh.AxisIndex(axis))] > 1;
        if (big < 2) continue;
        std::reverse(entry.begin(), entry.end());
        std::vector<PartitionSpec::Entry> entries = spec.entries();
        entries[static_cast<size_t>(d)] = entry;
        auto swapped = TensorLayout::Make(layout.shape(), PartitionSpec(entries), plan.mesh, plan.uneven);
        if (swapped.ok()) {
          m.group = static_cast<int>(g);
          m.layout = std::move(*swapped);
        }
      } else {  // kWrongDim: the entry moved to another dim it divides
        for (int other = 0; other < layout.shape().rank(); ++other) {
          if (other == d) continue;
          if (layout.shape()[other] % layout.tiles()[static_cast<size_t>(d)] != 0) continue;
          if (layout.shape()[d] % layout.tiles()[static_cast<size_t>(other)] != 0) continue;
          std::vector<PartitionSpec::Entry> entries = spec.entries();
          entries.resize(static_cast<size_t>(layout.shape().rank()));
          std::swap(entries[static_cast<size_t>(d)], entries[static_cast<size_t>(other)]);
          auto moved = TensorLayout::Make(layout.shape(), PartitionSpec(entries), plan.mesh, plan.uneven);
          if (moved.ok()) {
            m.group = static_cast<int>(g);
            m.layout = std::move(*moved);
            break;
          }
        }
      }
    }
  }
  return m;
}

class GroupChecker {
 public:
  GroupChecker(const planner::Plan& plan, const MeshGeometry& geo, LayoutCheckResult* result, int64_t max_errors)
      : plan_(plan), geo_(geo), result_(result), max_errors_(max_errors) {}

  void Error(const std::string& param, int64_t device, std::string message) {
    ++result_->errors_total;
    ++group_errors_;
    if (static_cast<int64_t>(result_->errors.size()) < max_errors_) {
      result_->errors.push_back(LayoutError{param, device, std::move(message)});
    }
  }

  void Check(const LayoutGroup& group, const planner::ParamPlan& param, const std::string& name,
             const TensorLayout& layout, const Mutation& mutation, bool mutated) {
    group_errors_ = 0;
    const Shape& shape = layout.shape();
    const int rank = shape.rank();
    const int64_t devices = geo_.devices();
    auto spec = SpecFromPartition(param.effective, rank, plan_.mesh);
    if (!spec.ok()) {
      Error(name, -1, "effective spec " + param.effective.ToString() + ": " + spec.status().diag().message);
      return;
    }
    // Every held device's slice, checked against the reference.
    slices_.assign(static_cast<size_t>(devices), {});
    held_.assign(static_cast<size_t>(devices), false);
    std::vector<int64_t> max_len(static_cast<size_t>(rank), 0);
    for (int64_t d = 0; d < devices; ++d) {
      if (!group.HeldBy(d)) continue;
      held_[static_cast<size_t>(d)] = true;
      std::vector<Range> slice = layout.SliceOf(d);
      if (mutated && mutation.dim >= 0 && d == mutation.device) {
        Range& r = slice[static_cast<size_t>(mutation.dim)];
        const int64_t length = r.second - r.first;
        r = {r.first + length, r.second + length};  // one block off
      }
      const std::vector<Range> want = ReferenceSlice(geo_, shape, *spec, d);
      if (slice != want && group_errors_ < 3) {
        Error(name, d,
              fmt::format("device {} holds {} but {} places {} there", d, RangesText(slice), param.effective.ToString(),
                          RangesText(want)));
      }
      int64_t elements = 1;
      for (int k = 0; k < rank; ++k) {
        const int64_t len = slice[static_cast<size_t>(k)].second - slice[static_cast<size_t>(k)].first;
        max_len[static_cast<size_t>(k)] = std::max(max_len[static_cast<size_t>(k)], len);
        elements *= std::max<int64_t>(len, 0);
      }
      const int64_t bytes = ByteSize(elements, group.bits).value_or(-1);
      if (bytes != group.BytesOn(d) && group_errors_ < 3) {
        Error(name, d, fmt::format("device {} holds {} bytes of it, the plan says {}", d, bytes, group.BytesOn(d)));
      }
      slices_[static_cast<size_t>(d)] = std::move(slice);
    }
    for (int k = 0; k < rank; ++k) {
      if (max_len[static_cast<size_t>(k)] != layout.shard_shape()[k]) {
        Error(
            name, -1,
            fmt::format("the largest shard has {} elements along dim {}, the plan's shard shape {} says {}",
                        max_len[static_cast<size_t>(k)], k, layout.shard_shape().ToString(), layout.shard_shape()[k]));
      }
    }
    CheckTiling(group, name, shape);
  }

 private:
  // 1-D tiling per dim, then replica counting over the product boxes.
  void CheckTiling(const LayoutGroup& group, const std::string& name, const Shape& shape) {
    const int rank = shape.rank();
    const int64_t devices = geo_.devices();
    // A tensor with a zero dim has no elements: every device holds the empty slice (its bytes, 0, were
    // checked against the plan above) and there is no block to tile or hold `replicas` times. Counting
    // its blocks anyway reported "slice #0 is held by 0 devices" (found by fuzz_tree_plan).
    for (int k = 0; k < rank; ++k) {
      if (shape[k] == 0) return;
    }
    std::vector<std::vector<Range>> distinct(static_cast<size_t>(rank));
    for (int64_t d = 0; d < devices; ++d) {
      if (!held_[static_cast<size_t>(d)] || Empty(slices_[static_cast<size_t>(d)])) continue;
      for (int k = 0; k < rank; ++k)
        distinct[static_cast<size_t>(k)].push_back(slices_[static_cast<size_t>(d)][static_cast<size_t>(k)]);
    }
    int64_t boxes = 1;
    for (int k = 0; k < rank; ++k) {
      std::vector<Range>& ranges = distinct[static_cast<size_t>(k)];
      std::sort(ranges.begin(), ranges.end());
      ranges.erase(std::unique(ranges.begin(), ranges.end()), ranges.end());
      int64_t at = 0;
      for (const Range& r : ranges) {
        if (r.first != at) {
          Error(name, -1,
                fmt::format("along dim {} (size {}) the device slices {} at index {}", k, shape[k],
                            r.first > at ? "leave a gap" : "overlap", std::min(r.first, at)));
          return;
        }
        at = r.second;
      }
      if (at != shape[k]) {
        Error(name, -1, fmt::format("along dim {} (size {}) no device holds index {}", k, shape[k], at));
        return;
      }
      boxes = CheckedMul(boxes, static_cast<int64_t>(ranges.size())).value_or(INT64_MAX);
    }
    const int64_t replicas = group.Replicas();
    // Every block must be held `replicas` times, by distinct devices: more block-replicas than devices
    // is already a failure, and checking it first bounds the bookkeeping below by the device count.
    const std::optional<int64_t> holders = CheckedMul(boxes, std::max<int64_t>(replicas, 1));
    if (!holders || *holders > devices) {
      Error(name, -1,
            fmt::format("the device slices cut the tensor into {} blocks and the plan says {} replicas each, "
                        "more than the {} devices can hold",
                        boxes, replicas, devices));
      return;
    }
    std::vector<int64_t> count(static_cast<size_t>(boxes), 0);
    std::vector<char> seen(static_cast<size_t>(*holders), 0);
    for (int64_t d = 0; d < devices; ++d) {
      if (!held_[static_cast<size_t>(d)] || Empty(slices_[static_cast<size_t>(d)])) continue;
      int64_t box = 0;
      for (int k = 0; k < rank; ++k) {
        const std::vector<Range>& ranges = distinct[static_cast<size_t>(k)];
        const Range& r = slices_[static_cast<size_t>(d)][static_cast<size_t>(k)];
        box = box * static_cast<int64_t>(ranges.size()) +
              (std::lower_bound(ranges.begin(), ranges.end(), r) - ranges.begin());
      }
      ++count[static_cast<size_t>(box)];
      const int64_t id = group.ReplicaIdOn(d, plan_.mesh);
      if (id < 0 || id >= replicas) {
        Error(name, d, fmt::format("device {} has replica id {}, outside 0..{}", d, id, replicas - 1));
        return;
      }
      char& s = seen[static_cast<size_t>(id * boxes + box)];
      if (s) {
        Error(name, d,
              fmt::format("device {} is a second holder of slice {} within replica group {}", d,
                          RangesText(slices_[static_cast<size_t>(d)]), id));
        return;
      }
      s = 1;
    }
    for (int64_t b = 0; b < boxes; ++b) {
      if (count[static_cast<size_t>(b)] != replicas) {
        Error(name, -1,
              fmt::format("slice #{} is held by {} devices, the plan says every slice has {} replicas", b,
                          count[static_cast<size_t>(b)], replicas));
        return;
      }
    }
  }

  static bool Empty(const std::vector<Range>& slice) {
    for (const Range& r : slice) {
      if (r.second <= r.first) return true;
    }
    return false;
  }

  const planner::Plan& plan_;
  const MeshGeometry& geo_;
  LayoutCheckResult* result_;
  int64_t max_errors_;
  int64_t group_errors_ = 0;
  std::vector<std::vector<Range>> slices_;
  std::vector<bool> held_;
};

}  // namespace

LayoutCheckResult CheckLayouts(const planner::Plan& plan, const ParamTree& tree, const LayoutCheckOptions& options) {
  LayoutCheckResult result;
  const MeshGeometry geo(plan.mesh);
  result.devices = geo.devices();
  result.tensors = static_cast<int64_t>(plan.params.size());
  std::vector<const planner::ParamPlan*> first(plan.groups.size(), nullptr);
  GroupChecker checker(plan, geo, &result, options.max_errors);
  for (const planner::ParamPlan& p : plan.params) {
    const TensorEntry& tensor = tree.tensors[static_cast<size_t>(p.tensor)];
    const LayoutGroup& group = plan.groups[static_cast<size_t>(p.group)];
    if (!(tensor.shape == group.layout.shape())) {
      checker.Error(tensor.name, -1,
                    fmt::format("the tensor has shape {} but its layout group is for {}", tensor.shape.ToString(),
                                group.layout.shape().ToString()));
    }
    if (!first[static_cast<size_t>(p.group)]) first[static_cast<size_t>(p.group)] = &p;
  }
  const Mutation mutation = PlanMutation(plan, first, options.injection);
  for (size_t g = 0; g < plan.groups.size(); ++g) {
    if (!first[g]) continue;
    ++result.groups;
    const planner::LayoutGroup& group = plan.groups[g];
    const bool mutated = static_cast<int>(g) == mutation.group;
    const TensorLayout& layout = mutated && mutation.layout ? *mutation.layout : group.layout;
    checker.Check(group, *first[g], tree.tensors[static_cast<size_t>(first[g]->tensor)].name, layout, mutation,
                  mutated);
  }
  return result;
}

}  // namespace easyplan::kernels
