#ifndef EASYPLAN_STEP_ESTIMATE_H_
#define EASYPLAN_STEP_ESTIMATE_H_

// One step's estimate (docs/COST.md): a laid-out plan's dry run, with its step records
// (kernels/step_records.h), priced on a hardware profile as a step (step/step_time.h) or, for a pipelined
// plan, as its schedule runs the stages (step/pipeline_step.h), then the throughput and MFU that follow.
// What it needs beside the records: the step's settings, the model's matmul parameters and the step's
// memory (the optimizer update's and the loss's bytes). `cost`, `report` and `suggest` share it
// (api/cost.h builds its inputs).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "kernels/dry_run.h"
#include "kernels/model.h"
#include "planner/memory.h"
#include "planner/plan.h"
#include "step/hardware.h"
#include "step/pipeline_step.h"
#include "step/precision.h"
#include "step/step_time.h"

namespace easyplan::step {

/// What one estimate varies on a laid-out plan: suggest changes these without resolving again.
struct StepSettings {
  Mode mode = Mode::kTrain;  ///< train, prefill or decode (one token per sequence against the cache)
  int64_t batch = 1;         ///< global, per optimizer step
  int64_t seq = 1;
  int64_t microbatches = 1;
  planner::CheckpointPolicy policy = planner::CheckpointPolicy::kNone;
  Precision precision = Precision::kBf16;  ///< the projections' matmuls (--precision)
  std::vector<int64_t> torus;              ///< --torus: a TPU slice's torus dims; empty = Cloud TPU's for its chips
  /// A pipelined step keeps its simulated passes (PipelineStep::timeline.boxes): report draws them from
  /// the simulation that priced the step rather than running the schedule again.
  bool keep_timeline = false;
  bool decode() const { return mode == Mode::kDecode; }
};

/// The dry run's model for a plan: everything an estimate needs that does not change with the mesh's
/// batch split. Computed once per (model, tree) by suggest.
struct StepModel {
  kernels::ModelDesc desc;  ///< batch and seq are set per estimate
  int64_t active_params = 0;
  bool flash_attention = true;  ///< attn_mechanism is not "vanilla"
};

/// The model FLOPs convention of MFU: 6 x N x tokens in training (2 x N x tokens serving), N the
/// parameters of the matmuls a token passes through (the input embedding lookup is not one; a MoE
/// layer's routed experts count top_k / experts of theirs). No attention term.
inline constexpr const char* kMfuConvention =
    "6*N*tokens (train) or 2*N*tokens (prefill, decode), N = active matmul parameters (no embedding lookup, norm or "
    "bias; routed "
    "experts x top_k/experts), no attention term";

struct StepEstimate {
  StepCost step;
  std::optional<PipelineStep> pipeline;  ///< a pipelined plan: each stage, the bubble, the sends
  planner::MemoryReport memory;          ///< of one microbatch's step
  int64_t tokens = 0;                    ///< per step: batch x seq (train, prefill), batch (decode)
  int64_t active_params = 0;             ///< N of kMfuConvention
  double model_flops = 0;                ///< 6 (or 2) x N x tokens
  double tokens_per_s = 0, tokens_per_s_per_device = 0, mfu = 0;
  /// The precision whose peak MFU divides by: fp8 when the projections run in fp8.
  Precision mfu_peak = Precision::kBf16;
  bool fits = false;
  /// The TPU slice the step was priced on, in words (api/topology_lines.h); empty off a torus.
  std::vector<std::string> topology;
};

/// The model one microbatch of `settings` runs: its share of the batch, and in decode one token per
/// sequence (nothing left to split on the sequence axes).
kernels::ModelDesc MicrobatchModel(const StepModel& model, const StepSettings& settings);

/// The bytes the optimizer update of `device` reads and writes once per step: it reads the parameters,
/// gradients and optimizer state and writes the parameters and the state (optax's adamw: m, v and the
/// parameters); each microbatch after the first also reads and writes the accumulated gradients.
int64_t UpdateBytes(const planner::DeviceMemory& device, int64_t microbatches);

/// Prices `run` (the dry run of one microbatch of MicrobatchModel(model, settings) over `plan`, with its
/// step records) on `hardware`. `memory` is that step's memory report (BuildMemoryReport): its worst
/// device's state gives the optimizer update's bytes, its logits the loss's, its KV cache a decode step's
/// reads. The caller bounds a pipeline's simulated passes first (api::CheckTimelineSize). BadInput when the
/// profile lacks a figure the step needs or the step's FLOPs overflow 64 bits.
StatusOr<StepEstimate> EstimateStep(const kernels::DryRunReport& run, const planner::Plan& plan, const StepModel& model,
                                    const HardwareProfile& hardware, const StepSettings& settings,
                                    planner::MemoryReport memory);

}  // namespace easyplan::step

#endif  // EASYPLAN_STEP_ESTIMATE_H_
