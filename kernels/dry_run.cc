#include "kernels/dry_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <unordered_map>

namespace easyplan::kernels {

int64_t DryRunReport::Bytes(CollectiveKind kind) const {
  int64_t total = 0;
  for (const CommRecord& r : comm.records) {
    if (r.kind == kind && r.backward != CommRecord::Backward::kOnly) total += r.bytes_per_device * Weight(r.scope);
  }
  return total;
}

DryRunReport StageView(const DryRunReport& run, const planner::PipelineSplit& split, int64_t stage) {
  DryRunReport view;
  view.devices = run.devices;
  view.layers = run.layers;
  view.layers_run = run.layers_run;
  view.repeated_scope = run.repeated_scope;
  view.stage_view = true;
  if (stage == 0) view.stage_weights["embed"] = 1;
  if (stage == split.stages - 1) view.stage_weights["final"] = 1;
  for (int64_t layer : split.LayersOfStage(stage)) {
    ++view.stage_weights[fmt::format("layer {}", std::min(layer, std::max<int64_t>(0, run.layers_run - 1)))];
  }
  for (const CommRecord& r : run.comm.records) {
    // A stage's sends and its gradient sync are the stage's by their record (kernels/step_records.h), the
    // forward's collectives by their scope.
    const bool staged = r.kind == CollectiveKind::kSendRecv || r.gradient_sync;
    if (staged ? r.stage == stage : view.Weight(r.scope) > 0) view.comm.records.push_back(r);
  }
  for (const MatmulRecord& m : run.matmuls.records) {
    if (view.Weight(m.scope) > 0) view.matmuls.records.push_back(m);
  }
  for (const MemoryOpRecord& m : run.matmuls.memory_ops) {
    if (view.Weight(m.scope) > 0) view.matmuls.memory_ops.push_back(m);
  }
  return view;
}

namespace {

// Layers run until the rest repeat the last one run: a layer's kind is its layer_types entry, whether its
// MLP is sparse and whether it skips RoPE. Leading dense layers (DeepSeek) run before the first MoE layer;
// interleaved kinds (Llama 4's dense / MoE and RoPE / NoPE, Qwen3-Next's linear / full attention, Gemma's
// sliding / global) run every layer up to the last change.
int64_t DistinctLayers(const ModelDesc& model) {
  auto kind = [&](int64_t layer) {
    const auto l = static_cast<size_t>(layer);
    return std::tuple(l < model.layer_types.size() ? model.layer_types[l] : std::string(),
                      l < model.sparse_layers.size() && model.sparse_layers[l],
                      l < model.nope_layers.size() && model.nope_layers[l]);
  };
  int64_t first = model.layers - 1;
  while (first > 0 && kind(first - 1) == kind(model.layers - 1)) --first;
  return std::max<int64_t>(first + 1, 1);
}

}  // namespace

StatusOr<DryRunReport> DryRunForward(const ModelDesc& model, const planner::Plan& plan, const ParamTree& tree,
                                     const DryRunOptions& options) {
  DryRunReport report;
  const Mesh& mesh = plan.mesh;
  const MeshGeometry geo(mesh);
  report.devices = geo.devices();
  report.layers = model.layers;
  ModelDesc run = model;
  run.layers = options.all_layers ? model.layers : std::min(model.layers, DistinctLayers(model));
  report.layers_run = run.layers;
  report.repeats = model.layers - run.layers;
  report.repeated_scope = fmt::format("layer {}", run.layers - 1);

  // Every parameter is checked now; a tensor is placed when the forward first asks for it, so the
  // layers that are not run cost nothing. An even layout gives every device its shard shape.
  std::unordered_map<std::string, const planner::ParamPlan*> by_name;
  for (const planner::ParamPlan& p : plan.params) {
    const TensorEntry& tensor = tree.tensors[static_cast<size_t>(p.tensor)];
    if (tensor.role != TensorRole::kParameter) continue;
    const planner::LayoutGroup& group = plan.groups[static_cast<size_t>(p.group)];
    if (!group.layout.even() || group.expert_layout) {
      return Status::BadInput({}, tensor.name + ": the step-time model needs an even layout (" +
                                      p.effective.ToString() + " on " + tensor.shape.ToString() + ")");
    }
    EP_RETURN_IF_ERROR(SpecFromPartition(p.effective, tensor.shape.rank(), mesh).status());
    by_name.emplace(tensor.name, &p);
  }
  std::unordered_map<std::string, DistTensor> params;
  const size_t blocks = options.per_device ? static_cast<size_t>(geo.devices()) : 1;
  auto place = [&](const planner::ParamPlan& p) {
    const TensorEntry& tensor = tree.tensors[static_cast<size_t>(p.tensor)];
    const planner::LayoutGroup& group = plan.groups[static_cast<size_t>(p.group)];
    DistTensor placed{Dims(tensor.shape.dims().begin(), tensor.shape.dims().end()),
                      *SpecFromPartition(p.effective, tensor.shape.rank(), mesh),
                      {}};
    placed.parameter = true;
    const Shape& shard = group.layout.shard_shape();
    placed.local.assign(blocks, HostTensor::Meta(Dims(shard.dims().begin(), shard.dims().end())));
    return placed;
  };

  const DistSpec ids_spec = ActivationSpec(mesh, {model.axes.batch, model.axes.sequence});
  if (!EvenlyDivisible({model.batch, model.seq}, ids_spec, geo)) {
    return Status::BadInput({}, fmt::format("batch {} x sequence {} is not divisible by the activation layout {}",
                                            model.batch, model.seq, ids_spec.ToString(mesh)));
  }
  EP_RETURN_IF_ERROR(CheckMoeBlock(model, mesh));
  const ParamLookup lookup = [&](const std::string& name) -> const DistTensor& {
    auto placed = params.find(name);
    if (placed != params.end()) return placed->second;
    auto it = by_name.find(name);
    EP_CHECK(it != by_name.end(), "the model needs tensor '" + name + "', which the tree lacks");
    return params.emplace(name, place(*it->second)).first->second;
  };
  Collectives comm(geo, model.bytes_per_element, &report.comm, Injection::kNone);
  Spmd spmd(comm);
  spmd.set_matmul_log(&report.matmuls);
  DistTensor ids{{model.batch, model.seq}, ids_spec, {}};
  ids.local.assign(
      blocks, HostTensor::Meta({model.batch / geo.Tiles(ids_spec.dims[0]), model.seq / geo.Tiles(ids_spec.dims[1])}));
  Forward(run, spmd, lookup, std::move(ids));

  report.flops.assign(static_cast<size_t>(geo.devices()), 0);
  for (const auto& [scope, per_device] : report.matmuls.scope_flops) {
    for (size_t d = 0; d < report.flops.size(); ++d) {
      report.flops[d] += per_device[per_device.size() == 1 ? 0 : d] * report.Weight(scope);
    }
  }
  return report;
}

}  // namespace easyplan::kernels
