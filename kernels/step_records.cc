#include "kernels/step_records.h"

#include <fmt/format.h>

#include <algorithm>
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
  for (const PartitionSpec::Entry* entry : {&model.batch_axes, &model.sequence_axes}) {
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
  // Per stage (-1: the whole model), the gradient bytes of each set of axes the gradients are replicated on.
  std::vector<std::map<std::vector<int>, int64_t>> buckets(static_cast<size_t>(stages));
  for (const planner::ParamPlan& p : plan.params) {
    const TensorEntry& tensor = tree.tensors[static_cast<size_t>(p.tensor)];
    if (tensor.role != TensorRole::kParameter) continue;
    const std::vector<std::string> used = p.effective.AllAxes();
    std::vector<int> replicated;
    for (int a : data_axes) {
      if (std::find(used.begin(), used.end(), mesh.axis_names[static_cast<size_t>(a)]) == used.end()) {
        replicated.push_back(a);
      }
    }
    if (replicated.empty()) continue;
    const planner::LayoutGroup& group = plan.groups[static_cast<size_t>(p.group)];
    const std::optional<int64_t> elements = group.layout.shard_shape().NumElements();
    const std::optional<int64_t> bytes = elements ? CheckedMul(*elements, bytes_per_element) : std::nullopt;
    if (!bytes) return overflow;
    for (int64_t s = 0; s < stages; ++s) {
      if (pipelined && !group.stages.On(s)) continue;
      int64_t& bucket = buckets[static_cast<size_t>(s)][replicated];
      const std::optional<int64_t> sum = CheckedAdd(bucket, *bytes);
      if (!sum) return overflow;
      bucket = *sum;
    }
  }
  for (int64_t s = 0; s < stages; ++s) {
    for (const auto& [axes, bytes] : buckets[static_cast<size_t>(s)]) {
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
