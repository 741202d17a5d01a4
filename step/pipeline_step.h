#ifndef EASYPLAN_STEP_PIPELINE_STEP_H_
#define EASYPLAN_STEP_PIPELINE_STEP_H_

// A pipelined training step (docs/PIPELINE.md, docs/COST.md): each stage's share of the dry run priced
// as a step of its own (step/step_time.h on StageView), then put together as the schedule runs them:
//  - the schedule's own order of passes, run with every stage's times (step/pipeline_schedule.h
//    SimulateSchedule, the timeline `report` draws): the busiest device's passes (m x (F + B) of one
//    microbatch through the slowest stage, its activation collectives and its sends to the next stage
//    included; under DualPipe a device's two stages, half the microbatches each) plus its idle time,
//    the bubble, which for equal stages is each schedule's formula from its paper (BubbleSeconds);
//  - plus what the overlappable collectives do not hide: the parameters gathered once per step (FSDP;
//    pipelining runtimes keep them gathered across the microbatches) behind the first forward and their
//    gradients reduce-scattered once behind the last backward, and each stage's gradient sync;
//  - plus the optimizer update, once per step, on the slowest stage.
// The stage-to-stage sends are the dry run's send records (kernels/step_records.h, the records check's
// pipelined forward makes): one microbatch's hidden state (and, in the backward, its gradient) from each
// device to the device of the same coordinates on the next stage, at the link that boundary crosses: the
// network when the two devices sit in different fast domains (or different slices, --dcn), else the fast
// domain. Interleaving crosses V times as many boundaries per microbatch.

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "kernels/dry_run.h"
#include "planner/pipeline.h"
#include "planner/plan.h"
#include "step/hardware.h"
#include "step/pipeline_schedule.h"
#include "step/step_time.h"

namespace easyplan::step {

/// One stage's price for one microbatch.
struct StageStep {
  int64_t stage = 0;
  int64_t layers = 0;
  StepCost cost;            ///< the stage's own step (one microbatch; its gradient sync and update once)
  double microbatch_s = 0;  ///< F + B of one microbatch with its exposed collectives and sends
};

struct PipelineStep {
  std::vector<StageStep> stages;  ///< in stage order
  int64_t slowest = 0;            ///< the stage that sets the pace
  int64_t microbatches = 1;
  StageTimes pace;  ///< the slowest stage's F, B (input part) and W, sends included
  /// One microbatch on the busiest device, whose passes set the pace: the slowest stage's microbatch, or
  /// under DualPipe the mean of the two stages its device holds (each runs half the microbatches).
  StepCost::Microbatch pace_microbatch;
  double pipeline_s = 0;             ///< the simulated schedule's end: every pass of every microbatch
  double bubble_s = 0;               ///< of pipeline_s, the busiest device's idle time
  double bubble_fraction = 0;        ///< bubble / step
  int64_t send_bytes = 0;            ///< per device, one microbatch's hidden state over one boundary
  int64_t sends_per_microbatch = 0;  ///< boundaries one microbatch crosses in each direction, per stage
  std::string send_link;             ///< "fast" or "network": the slowest boundary's
  double send_s = 0;                 ///< one send over that link
  double exposed_parameter_s = 0;    ///< per step: the one parameter gather and reduce-scatter left unhidden
  double exposed_gradient_s = 0;     ///< the slowest stage's gradient sync its last backward does not hide
  double update_s = 0;
  double step_time_s = 0;
  double bubble_free_s = 0;  ///< the same step without the bubble: the busiest device's passes, plus the rest
  /// The simulated schedule that priced the step: its end and busy times, and its passes when the caller
  /// kept them (StepSettings::keep_timeline; report draws them).
  Timeline timeline;
};

/// Prices `plan`'s pipelined training step from `run`, the dry run of one microbatch with its step records
/// (kernels/step_records.h: the stage sends and each stage's gradient sync). `per_stage[s]` are stage s's
/// step options (its update and loss bytes; microbatches 1); `microbatches` the step's.
/// The schedule is simulated: the caller bounds its passes first (SchedulePasses).
StatusOr<PipelineStep> PricePipeline(const kernels::DryRunReport& run, const planner::Plan& plan,
                                     const kernels::ModelDesc& model, const step::HardwareProfile& hardware,
                                     const std::vector<StepOptions>& per_stage, int64_t microbatches,
                                     bool keep_timeline = false);

/// Every stage's F, B (input part) and W of one microbatch as the schedule runs them: its forward and
/// backward with their exposed collectives, and the sends of each boundary the microbatch crosses each way.
/// For the slowest stage they are `step.pace`.
std::vector<StageTimes> PipelineStageTimes(const PipelineStep& step);

/// The least bubble `split`'s schedule can have at `microbatches`, as a fraction of the microbatches' work
/// (m times the mean stage's F + B): BubbleSeconds with every backward second a weight gradient
/// (W = B = 2F), which is (p - 1) / (V m) for GPipe, 1F1B and interleaved and 0 for zero bubble and
/// DualPipe. No stage times leave less while the last stage (the head's) is the slowest; an earlier slowest
/// stage can leave up to 4% less of the step (step/pipeline_schedule_test.cc). suggest prunes with it.
double LeastBubbleFraction(const planner::PipelineSplit& split, int64_t microbatches);

}  // namespace easyplan::step

#endif  // EASYPLAN_STEP_PIPELINE_STEP_H_
