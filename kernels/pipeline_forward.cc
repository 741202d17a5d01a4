#include "kernels/pipeline_forward.h"

#include <fmt/format.h>

#include <memory>
#include <utility>

#include "kernels/forward_pass.h"
#include "kernels/spmd.h"
#include "kernels/stage_mesh.h"

namespace easyplan::kernels {
namespace {

// One stage as this process runs it; all null when it runs none of the stage's devices.
struct StageRunner {
  std::unique_ptr<Transport> transport;
  std::unique_ptr<Collectives> comm;
  std::unique_ptr<Spmd> spmd;
  std::unique_ptr<internal::ForwardPass> pass;
};

}  // namespace

std::vector<StageBoundary> StageBoundaries(const planner::PipelineSplit& split) {
  std::vector<StageBoundary> out;
  int64_t layer = 0;
  for (int64_t c = 0; c < split.Chunks(); ++c) {
    if (c > 0) out.push_back({layer, (c + split.stages - 1) % split.stages, c % split.stages});
    layer += split.chunk_layers[static_cast<size_t>(c)];
  }
  return out;
}

DistSpec BoundarySpec(const ModelDesc& model, const Dims& shape, const MeshGeometry& stage) {
  const std::vector<PartitionSpec::Entry> entries{model.axes.batch, model.axes.sequence, model.axes.hidden_state};
  return ConstrainedSpec(shape, ActivationSpec(stage.mesh(), entries), stage);
}

StatusOr<std::vector<StageActivation>> PipelinedForward(const ModelDesc& model, const PipelineRun& pipeline,
                                                        Transport& whole, const std::vector<ParamLookup>& params,
                                                        const HostTensor& ids, CommLog* log) {
  const planner::PipelineSplit& split = pipeline.split;
  EP_CHECK(static_cast<int64_t>(params.size()) == split.stages, "a parameter lookup per stage");
  const Mesh stage_mesh = StageMesh(whole.geo().mesh(), pipeline.pp_axis);
  const MeshGeometry stage_geo(stage_mesh);
  std::vector<StageRunner> stages(static_cast<size_t>(split.stages));
  for (int64_t s = 0; s < split.stages; ++s) {
    StageRunner& run = stages[static_cast<size_t>(s)];
    run.transport = whole.Stage(pipeline.pp_axis, s);
    if (!run.transport) continue;
    const Injection injection =
        pipeline.injection == Injection::kDropAllReduce && s > 0 ? Injection::kNone : pipeline.injection;
    run.comm = std::make_unique<Collectives>(*run.transport, model.bytes_per_element, log, injection);
    run.comm->SetStage(s);
    run.spmd = std::make_unique<Spmd>(*run.comm);
    run.pass = std::make_unique<internal::ForwardPass>(model, *run.spmd, params[static_cast<size_t>(s)]);
  }
  Collectives boundary(whole, model.bytes_per_element, log, pipeline.injection);

  const Dims hidden_shape{model.batch, model.seq, model.hidden};
  const Dims logits_shape{model.batch, model.seq, model.vocab};
  const DistSpec hidden = BoundarySpec(model, hidden_shape, stage_geo);
  const DistSpec logits = BoundarySpec(model, logits_shape, stage_geo);

  std::vector<StageActivation> out;
  auto keep = [&](Activation a, int64_t stage, const DistSpec& spec) -> Status {
    if (a.value.spec != spec) {
      return Status::Internal(fmt::format("pipeline stage {} left {} in {}, where the next stage expects {}", stage,
                                          a.name, a.value.spec.ToString(stage_mesh), spec.ToString(stage_mesh)));
    }
    out.push_back({std::move(a), stage});
    return Status();
  };

  StageRunner& first = stages[0];
  Activation embed{"embed", DistTensor{hidden_shape, hidden, {}}};
  if (first.pass) {
    embed =
        first.pass->Embed(first.spmd->Place(ids, ActivationSpec(stage_mesh, {model.axes.batch, model.axes.sequence})));
  }
  DistTensor h = embed.value;
  EP_RETURN_IF_ERROR(keep(std::move(embed), 0, hidden));
  const std::vector<StageBoundary> boundaries = StageBoundaries(split);
  int64_t layer = 0;
  for (int64_t c = 0; c < split.Chunks(); ++c) {
    const int64_t stage = c % split.stages;
    if (c > 0) {  // the chunk before ran on the stage before: its output crosses to this one
      const StageBoundary& b = boundaries[static_cast<size_t>(c - 1)];
      boundary.SetScope(fmt::format("layer {}", b.layer));
      h = boundary.SendToStage(std::move(h), pipeline.pp_axis, b.from, b.to,
                               fmt::format("pipeline stage {} to stage {}", b.from, b.to));
    }
    StageRunner& run = stages[static_cast<size_t>(stage)];
    for (int64_t i = 0; i < split.chunk_layers[static_cast<size_t>(c)]; ++i, ++layer) {
      if (run.pass) h = run.pass->Layer(std::move(h), layer);
      EP_RETURN_IF_ERROR(keep({fmt::format("layer {}", layer), h}, stage, hidden));
    }
  }
  if (layer != model.layers) {
    return Status::Internal(fmt::format("the pipeline's chunks hold {} layers, the model {}", layer, model.layers));
  }
  StageRunner& last = stages[static_cast<size_t>(split.stages - 1)];
  Activation head{"logits", DistTensor{logits_shape, logits, {}}, Activation::Kind::kLogits};
  if (last.pass) head = last.pass->Head(std::move(h));
  EP_RETURN_IF_ERROR(keep(std::move(head), split.stages - 1, logits));
  return out;
}

}  // namespace easyplan::kernels
