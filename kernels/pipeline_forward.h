#ifndef EASYPLAN_KERNELS_PIPELINE_FORWARD_H_
#define EASYPLAN_KERNELS_PIPELINE_FORWARD_H_

// The reference forward pass (kernels/model.h) of a pipelined plan, as its stages run it
// (docs/PIPELINE.md): each stage on its own devices, the mesh's devices at its pp coordinate
// (kernels/stage_mesh.h), with its own parameters and its own collectives. The first stage embeds; model
// chunk c runs its layers on stage c mod p (Megatron-LM's interleaved assignment,
// planner::PipelineSplit); the last stage runs the final norm and the head. Where consecutive chunks sit on
// different stages, the hidden state crosses the boundary by a send/recv (Collectives::SendToStage), in
// chunk order, as Megatron-LM's forward step hands it on (send_forward / recv_forward,
// megatron/core/pipeline_parallel/p2p_communication.py).
//
// One batch goes through once: the backward pass and the schedule's order of microbatches are not
// executed (their cost is the step model's, docs/PIPELINE.md).

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/collectives.h"
#include "kernels/model.h"
#include "kernels/transport.h"
#include "planner/pipeline.h"

namespace easyplan::kernels {

/// An output of the pipelined forward and the stage whose devices hold it.
struct StageActivation {
  /// On the stage's mesh (kernels/stage_mesh.h). Its blocks are this process's devices of the stage:
  /// none when the process runs none of them, but the shape and spec are every process's.
  Activation activation;
  int64_t stage = 0;
};

/// The pipeline a plan runs: its split and the mesh axis that holds its stages.
struct PipelineRun {
  planner::PipelineSplit split;
  int pp_axis = -1;
  /// The injection the stages' collectives apply: drop-all-reduce on the first stage only (so every
  /// engine drops the same one, whichever stages a process runs), drop-stage-send at the first boundary.
  Injection injection = Injection::kNone;
};

/// Where consecutive model chunks sit on different stages: the hidden state entering layer `layer` (the
/// first of its chunk) crosses from stage `from` to stage `to`. In chunk order; none without a pipeline.
struct StageBoundary {
  int64_t layer = 0, from = 0, to = 0;
};
std::vector<StageBoundary> StageBoundaries(const planner::PipelineSplit& split);

/// The layout of what crosses a boundary, which the receiving stage knows without running the sender:
/// the hidden-state constraint on [batch, seq, hidden] (and on the logits [batch, seq, vocab], the loss's
/// entries, the same), on `stage`, a stage's mesh.
DistSpec BoundarySpec(const ModelDesc& model, const Dims& shape, const MeshGeometry& stage);

/// Runs `model`'s forward over `ids` [batch, seq] through the stages this process runs, on `whole`'s
/// devices (the whole mesh's transport): `params[s]` looks up stage s's parameters (unused for stages
/// this process does not run). Every collective and send/recv is recorded in `log`, each with its stage.
/// Returns "embed", "layer 0", ..., "logits" in that order. Internal when a stage's output is not in the
/// layout the next stage expects.
StatusOr<std::vector<StageActivation>> PipelinedForward(const ModelDesc& model, const PipelineRun& pipeline,
                                                        Transport& whole, const std::vector<ParamLookup>& params,
                                                        const HostTensor& ids, CommLog* log);

}  // namespace easyplan::kernels

#endif  // EASYPLAN_KERNELS_PIPELINE_FORWARD_H_
