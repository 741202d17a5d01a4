#include "kernels/step_records.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/checked_math.h"
#include "kernels/pipeline_forward.h"
#include "kernels/stage_mesh.h"
#include "planner/pipeline.h"

namespace easyplan::kernels {
namespace {

void AppendStageSends(const ModelDesc& model, const planner::Plan& plan, DryRunReport& run) {
  const std::optional<int> pp = plan.mesh.AxisIndex(std::string(planner::kPipelineAxis));
  if (!plan.pipeline.pipelined() || !pp) return;
  const MeshGeometry stage(StageMesh(plan.mesh, *pp));
  const Dims hidden{model.batch, model.seq, model.hidden};
  const DistSpec spec = BoundarySpec(model, hidden, stage);
  for (const StageBoundary& b : StageBoundaries(plan.pipeline)) {
    run.comm.records.push_back(StageSendRecord(hidden, spec, stage, *pp, b.from, b.to, fmt::format("layer {}", b.layer),
                                               fmt::format("pipeline stage {} to stage {}", b.from, b.to),
                                               model.bytes_per_element));
  }
}

// The mesh axes the step's data is split on: the activation layout's batch and sequence axes, of size > 1.
std::vector<int> DataAxes(const ModelDesc& model, const Mesh& mesh) {
  std::vector<int> axes;
  for (const PartitionSpec::Entry* entry : {&model.axes.batch, &model.axes.sequence}) {
    for (const std::string& name : *entry) {
      const std::optional<int> a = mesh.AxisIndex(name);
      if (a && mesh.shape[static_cast<size_t>(*a)] > 1 && std::find(axes.begin(), axes.end(), *a) == axes.end()) {
        axes.push_back(*a);
      }
    }
  }
  return axes;
}

Status AppendGradientSync(const ModelDesc& model, const planner::Plan& plan, const ParamTree& tree,
                          int64_t bytes_per_element, DryRunReport& run) {
  const Mesh& mesh = plan.mesh;
  const std::vector<int> data_axes = DataAxes(model, mesh);
  if (data_axes.empty()) return Status();
  const Status overflow = Status::BadInput(
      {}, "the gradient sync's bytes do not fit in 64 bits: expected a smaller model or a larger mesh");
  const bool pipelined = plan.pipeline.pipelined();
  const int64_t stages = pipelined ? plan.pipeline.stages : 1;
  // Which data axes a gradient is replicated on, as a mask over `data_axes` (bit i: data_axes[i]); a layout
  // group's tensors share their spec, so each group's is worked out once. Then the bytes of each mask: over
  // tensors on every stage, and over those on one stage (a tied embedding on two).
  constexpr uint64_t kUnknown = ~uint64_t{0};
  if (data_axes.size() >= 64) return Status::Internal("AppendGradientSync: more data axes than a mask holds");
  std::vector<uint64_t> group_mask(plan.groups.size(), kUnknown);
  using Buckets = std::map<uint64_t, int64_t>;
  Buckets everywhere;
  std::vector<Buckets> staged(static_cast<size_t>(stages));
  auto add = [&](Buckets& buckets, uint64_t mask, int64_t bytes) {
    const std::optional<int64_t> sum = CheckedAdd(buckets[mask], bytes);
    if (sum) buckets[mask] = *sum;
    return sum.has_value();
  };
  for (const planner::ParamPlan& p : plan.params) {
    const TensorEntry& tensor = tree.tensors[static_cast<size_t>(p.tensor)];
    if (tensor.role != TensorRole::kParameter) continue;
    uint64_t& mask = group_mask[static_cast<size_t>(p.group)];
    if (mask == kUnknown) {
      mask = 0;
      const std::vector<std::string> used = p.effective.AllAxes();
      for (size_t i = 0; i < data_axes.size(); ++i) {
        const std::string& name = mesh.axis_names[static_cast<size_t>(data_axes[i])];
        if (std::find(used.begin(), used.end(), name) == used.end()) mask |= uint64_t{1} << i;
      }
    }
    if (mask == 0) continue;
    const planner::LayoutGroup& group = plan.groups[static_cast<size_t>(p.group)];
    const std::optional<int64_t> elements = group.layout.shard_shape().NumElements();
    const std::optional<int64_t> bytes = elements ? CheckedMul(*elements, bytes_per_element) : std::nullopt;
    if (!bytes) return overflow;
    if (!pipelined || group.stages.Everywhere()) {
      if (!add(everywhere, mask, *bytes)) return overflow;
      continue;
    }
    for (const int64_t s : {group.stages.stage, group.stages.also}) {
      if (s >= 0 && s < stages && !add(staged[static_cast<size_t>(s)], mask, *bytes)) return overflow;
    }
  }
  for (int64_t s = 0; s < stages; ++s) {
    // One all-reduce per set of axes, in the order of the axes' mesh indices as data_axes lists them.
    Buckets merged = everywhere;
    for (const auto& [mask, bytes] : staged[static_cast<size_t>(s)]) {
      if (!add(merged, mask, bytes)) return overflow;
    }
    std::map<std::vector<int>, int64_t> by_axes;
    for (const auto& [mask, bytes] : merged) {
      std::vector<int> axes;
      for (size_t i = 0; i < data_axes.size(); ++i) {
        if ((mask >> i) & 1) axes.push_back(data_axes[i]);
      }
      by_axes.emplace(std::move(axes), bytes);
    }
    for (const auto& [axes, bytes] : by_axes) {
      int64_t g = 1;
      for (int a : axes) g *= mesh.shape[static_cast<size_t>(a)];
      // A ring all-reduce: each device receives 2 (g - 1) / g of the bucket.
      const std::optional<int64_t> twice = CheckedMul(2 * (g - 1), bytes);
      if (!twice) return overflow;
      CommRecord r{CollectiveKind::kAllReduce,
                   "all layers",
                   "gradient all-reduce over the data axes",
                   "",
                   g,
                   *twice / g,
                   true,
                   axes};
      r.backward = CommRecord::Backward::kOnly;
      r.gradient_sync = true;
      r.stage = pipelined ? s : -1;
      run.comm.records.push_back(std::move(r));
    }
  }
  return Status();
}

}  // namespace

Status AppendStepRecords(const ModelDesc& model, const planner::Plan& plan, const ParamTree& tree,
                         const StepRecordOptions& options, DryRunReport& run) {
  AppendStageSends(model, plan, run);
  if (!options.train) return Status();
  return AppendGradientSync(model, plan, tree, options.gradient_bytes_per_element, run);
}

}  // namespace easyplan::kernels
