#ifndef EASYPLAN_STEP_PIPELINE_SCHEDULE_H_
#define EASYPLAN_STEP_PIPELINE_SCHEDULE_H_

// The order in which each stage of a pipeline runs its passes, and the timeline that order gives
// (docs/PIPELINE.md, "The timeline"). A pass is one microbatch through one model chunk: its forward (F),
// its backward (B), or, where the schedule splits the backward, its input gradients (I, the paper's B)
// and its weight gradients (W). Each schedule's order is its reference implementation's:
//  - GPipe: every forward, then every backward, in microbatch order (PyTorch's
//    torch.distributed.pipelining ScheduleGPipe). Circular, with V chunks per stage: every microbatch
//    through chunk 0, then chunk 1, ...; then the backwards, the last chunk first and the microbatches in
//    reverse (ScheduleLoopedBFS; MaxText's num_pipeline_repeats runs the same breadth-first order).
//  - 1F1B: Megatron-LM's forward_backward_pipelining_without_interleaving
//    (megatron/core/pipeline_parallel/schedules.py): stage i runs min(p - i - 1, m) warm-up forwards,
//    then one forward and one backward until the forwards run out, then the remaining backwards.
//  - Interleaved: forward_backward_pipelining_with_interleaving of the same file. Its schedule table
//    (get_schedule_table, microbatch_group_size_per_vp_stage = p, the default) takes microbatches in groups
//    of p, the last group taking the rest, and runs each group through chunk 0, then chunk 1, ...; stage i
//    warms up with (p - i - 1) x 2 + (V - 1) x p of these (all of them when that is as many), then runs
//    forward k + warm-up and backward k (get_model_chunk_id: the backward takes the chunks in reverse).
//  - Zero bubble, ZB-H1 (Qi et al., ICLR 2024, "Zero Bubble Pipeline Parallelism", section 2.1): 1F1B's
//    warm-up and steady state with the backward split into I and W; stage i runs its first i steady-state
//    rounds without a W and then a W after each I (the oldest waiting), and the W's left at the end.
//    PyTorch's ScheduleInterleavedZeroBubble ("the ZB1P schedule in the paper") builds this order with
//    one stage per rank (_get_1f1b_rank_ops with num_1f1b_microbatches = rank).
//  - DualPipe: DualPipe.step() of github.com/deepseek-ai/DualPipe (dualpipe/dualpipe.py), its eight
//    steps (nF0, nF0F1, nB1W1F1, nF0B1F1B0, nB1F1B0, nB1B0, nWB0, nW) on each rank, half the microbatches
//    entering at each end of the pipeline: the first m/2 at stage 0 (their chunk c runs on device c), the
//    rest at stage p-1 (chunk c on device p-1-c). A forward and a backward that step() runs together
//    (_forward_backward_chunk) are an F&B pair, and a send step() defers past a later pass is sent there.
// SimulateSchedule runs an order: a pass starts when its stage has finished the previous pass and the
// pass it needs (the previous chunk's forward, the next chunk's backward, its own input gradients for a
// W) has ended and been sent. Each pass takes its stage's time as `cost` prices it, the stage's send to
// its neighbour included (step/pipeline_step.h), so the end time is computed, not drawn.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "planner/pipeline.h"
#include "step/pipeline_bubble.h"

namespace easyplan::step {

enum class PassKind {
  kForward,        ///< F
  kBackward,       ///< B: the whole backward, input and weight gradients
  kBackwardInput,  ///< I: the input gradients alone (zero bubble, DualPipe), what the next stage waits for
  kWeight,         ///< W: the weight gradients of an earlier I
};

/// "F", "B", "I", "W".
std::string_view PassKindName(PassKind kind);

struct ScheduledPass {
  PassKind kind = PassKind::kForward;
  int64_t microbatch = 0;
  /// The model chunk, in the order a microbatch passes through them: 0 .. split.Chunks() - 1.
  int64_t chunk = 0;
  /// DualPipe: this pass (a forward) and the next (a backward) run overlapped as one F&B pair; both
  /// start when both inputs are there, and both outputs leave when the pair ends.
  bool overlapped = false;
  /// DualPipe: the index, in its stage's order, of the later pass after which this pass's output is sent
  /// (step() defers the send); nullopt: at this pass's own end.
  std::optional<int64_t> sent_after;
};

/// The pp coordinate that runs chunk `chunk` of microbatch `microbatch`: chunk c % p when interleaved
/// (Megatron-LM's assignment), under DualPipe c for the first half of the microbatches and p - 1 - c for
/// the second, else c.
int64_t DeviceOfChunk(const planner::PipelineSplit& split, int64_t chunk, int64_t microbatch, int64_t microbatches);

/// The stage whose layers chunk `chunk` runs, and so whose times it takes: c % p.
int64_t StageOfChunk(const planner::PipelineSplit& split, int64_t chunk);

/// Each pp coordinate's passes in the order its schedule runs them (`[d]` for coordinate d). Bad input
/// when planner::CheckMicrobatches refuses `microbatches` for the schedule.
StatusOr<std::vector<std::vector<ScheduledPass>>> ScheduleOrder(const planner::PipelineSplit& split,
                                                                int64_t microbatches);

/// The passes ScheduleOrder issues for `microbatches` over every pp coordinate, at most: per stage
/// 2 x m x V (F and B of each microbatch through each chunk) for gpipe, 1f1b and interleaved, 3 x m with a
/// split backward (zero-bubble; dualpipe's two chunks each take half the microbatches, and only some of
/// its backwards split). Saturates at INT64_MAX. Computed without building the order, so that a caller
/// can bound a timeline before SimulateSchedule allocates it.
int64_t SchedulePasses(const planner::PipelineSplit& split, int64_t microbatches);

/// The passes of one microbatch through one chunk: F and B (2), or F, B and W (3) under a schedule that
/// splits the backward (zero-bubble, dualpipe).
int64_t PassesPerChunk(planner::PipelineSchedule schedule);

struct TimelineBox {
  int64_t device = 0;  ///< the pp coordinate that runs it
  PassKind kind = PassKind::kForward;
  int64_t microbatch = 0;
  int64_t chunk = 0;
  double start = 0;  ///< seconds from the step's start
  double end = 0;
  bool overlapped = false;  ///< one half of a DualPipe F&B pair
};

struct Timeline {
  std::vector<TimelineBox> boxes;  ///< device 0's in its order, then device 1's, ...
  double end = 0;                  ///< when the last pass ends
  std::vector<double> busy;        ///< per device, the seconds its passes take (end - busy is its idle time)
};

/// Runs ScheduleOrder(split, microbatches) with `times[s]`, one microbatch's F, I (backward_input) and W
/// through stage s's layers, sends included; an interleaved chunk takes 1/V of its stage's. A pass starts
/// when its device is free and its input has arrived: the end of the pass it needs on its neighbour, whose
/// time ends with the send. Bad input for a count the schedule cannot run; internal error when
/// `times` does not have one entry per stage, or the order deadlocks.
/// `keep_boxes` false leaves Timeline::boxes empty (pricing needs the end and the busy times only).
StatusOr<Timeline> SimulateSchedule(const planner::PipelineSplit& split, int64_t microbatches,
                                    const std::vector<StageTimes>& times, bool keep_boxes = true);

}  // namespace easyplan::step

#endif  // EASYPLAN_STEP_PIPELINE_SCHEDULE_H_
