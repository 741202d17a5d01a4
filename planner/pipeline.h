#ifndef EASYPLAN_PLANNER_PIPELINE_H_
#define EASYPLAN_PLANNER_PIPELINE_H_

// Pipeline parallelism (docs/PIPELINE.md): the `pp` mesh axis splits the decoder layers into stages,
// and a schedule runs the step's microbatches through them. This file is the pipeline's shape as a
// value: which layers each stage holds (SplitLayers), and what each schedule implies, each from its
// source:
//  - GPipe (Huang et al. 2019, "GPipe: Efficient Training of Giant Neural Networks using Pipeline
//    Parallelism"): every forward, then every backward; stage i keeps all m microbatches' activations.
//  - 1F1B (PipeDream-Flush; Narayanan et al. SC21, "Efficient Large-Scale Language Model Training on GPU
//    Clusters Using Megatron-LM", section 2.2.1): the same bubble, (p-1) x (forward + backward) of one
//    microbatch, and stage i keeps p - i microbatches in flight (Megatron-LM's
//    forward_backward_pipelining_without_interleaving: num_warmup_microbatches = p - i - 1, plus the
//    one in its steady state).
//  - Interleaved (the same paper, section 2.2.2): each stage holds V model chunks; the bubble shrinks by
//    V, m must be a multiple of p, and stage i warms up (p - i - 1) x 2 + (V - 1) x p chunk-microbatches
//    (forward_backward_pipelining_with_interleaving), so the first stage keeps
//    1 + (p - 1) / (p V) times 1F1B's activations (Korthikanti et al. 2022, "Reducing Activation
//    Recomputation in Large Transformer Models", section 4.2.3).
//  - Zero bubble, ZB-H1 (Qi et al., ICLR 2024, "Zero Bubble Pipeline Parallelism"; the ZB1P row of
//    DeepSeek's DualPipe README table): the backward split into B (input gradients) and W (weight
//    gradients), W deferred into the bubble: bubble (p-1)(F + B - 2W), the peak activations of 1F1B.
//  - DualPipe (DeepSeek-V3 technical report, section 3.2.1; github.com/deepseek-ai/DualPipe README
//    table): bidirectional, bubble (p/2 - 1)(F&B + B - 3W), parameters 2x, activations p + 1.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace easyplan::planner {

/// The mesh axis that holds the pipeline stages (--mesh pp=P): easyplan's, not EasyDeL's, whose mesh has
/// no pipeline axis. No partition spec names it; a tensor lives on its stage's devices instead.
inline constexpr std::string_view kPipelineAxis = "pp";

enum class PipelineSchedule { kGpipe, k1F1B, kInterleaved, kZeroBubble, kDualPipe };
inline constexpr PipelineSchedule kPipelineSchedules[] = {PipelineSchedule::kGpipe, PipelineSchedule::k1F1B,
                                                          PipelineSchedule::kInterleaved, PipelineSchedule::kZeroBubble,
                                                          PipelineSchedule::kDualPipe};

/// "gpipe", "1f1b", "interleaved", "zero-bubble", "dualpipe" (--pp-schedule's spelling).
std::string_view PipelineScheduleName(PipelineSchedule schedule);
std::optional<PipelineSchedule> ParsePipelineSchedule(std::string_view text);

/// The pipeline a plan runs: `stages` (the pp axis's size), `virtual_stages` model chunks per stage
/// (interleaved, or gpipe made circular) and the layers of each chunk, in model order. Chunk c runs on
/// stage c % stages (Megatron-LM's interleaved assignment, MaxText's circular pipeline and PyTorch's
/// "loop" stage-to-rank mapping), so stage s holds chunks s, s + p, s + 2p, ...
struct PipelineSplit {
  int64_t stages = 1;
  int64_t virtual_stages = 1;
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  std::vector<int64_t> chunk_layers;  ///< layers per chunk, stages x virtual_stages entries
  bool balanced_by_us = false;        ///< the layers did not divide: SplitLayers chose the counts
  std::string how;                    ///< "126 layers over 16 stages: ..." when balanced_by_us

  bool pipelined() const { return stages > 1; }
  int64_t Chunks() const { return stages * virtual_stages; }
  /// The stage that runs decoder layer `layer` (0-based; layers past the split go to the last stage).
  int64_t StageOfLayer(int64_t layer) const;
  /// The decoder layers stage `stage` holds, in model order.
  std::vector<int64_t> LayersOfStage(int64_t stage) const;
  int64_t LayerCount(int64_t stage) const;
};

/// The one check of a schedule against the pipeline's shape, which every command runs (through
/// SplitLayers, whatever else it checks): --virtual-stages only with interleaved or gpipe (the schedules
/// that run several chunks per stage), and dualpipe only on an even stage count (its two directions pair
/// stage s with p-1-s; DualPipe.step() asserts it). Needs no microbatch count: CheckMicrobatches adds those.
Status CheckSchedule(int64_t stages, int64_t virtual_stages, PipelineSchedule schedule);

/// Splits `layers` decoder layers into stages x virtual_stages chunks. `explicit_counts` (--pp-layers)
/// gives each chunk's count, or with virtual stages each stage's (dealt evenly to its chunks), and must
/// sum to `layers`; else equal counts when they divide, and otherwise
/// counts that differ by one, the larger ones on the middle stages (the first stage also runs the
/// embedding, the last the final norm, the head and the loss; Megatron-LM's
/// --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers exist for that reason).
/// Errors name the flag: a stage without a layer, counts that do not sum, and CheckSchedule's. GPipe with virtual
/// stages is the circular pipeline: MaxText's num_pipeline_repeats, PyTorch's ScheduleLoopedBFS.
StatusOr<PipelineSplit> SplitLayers(int64_t layers, int64_t stages, int64_t virtual_stages, PipelineSchedule schedule,
                                    const std::vector<int64_t>& explicit_counts);

/// "9,8,8,7" (--pp-layers) as counts; "" is none.
StatusOr<std::vector<int64_t>> ParseLayerCounts(std::string_view text);

/// Whether `microbatches` can run `split`'s schedule: 1F1B and zero bubble need m >= p (fewer leaves
/// the warm-up unfilled: torchtitan issues 775 and 1552 hang there), interleaved a multiple of p
/// (Megatron-LM asserts it), DualPipe an even m >= 2p with an even p (its two directions; DualPipe.step()
/// asserts both). GPipe runs any m; circular (virtual stages) m >= p, so that the first microbatch is
/// back at stage 0 for its next chunk before that stage runs out of work.
/// The message names the schedule, the numbers and the nearest valid counts.
Status CheckMicrobatches(const PipelineSplit& split, int64_t microbatches);

/// Microbatches of activations stage `stage` keeps at the schedule's peak, in units of one microbatch
/// through that stage's whole layer share (interleaved counts chunks: a fraction of whole-stage units).
double InFlightMicrobatches(const PipelineSplit& split, int64_t stage, int64_t microbatches);

/// Copies of each stage's parameters (DualPipe keeps both directions' copies: 2; else 1).
int64_t ParameterCopies(const PipelineSplit& split);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_PIPELINE_H_
