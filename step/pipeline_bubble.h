#ifndef EASYPLAN_STEP_PIPELINE_BUBBLE_H_
#define EASYPLAN_STEP_PIPELINE_BUBBLE_H_

// The bubble formulas of the pipeline schedules' papers (docs/PIPELINE.md's table), for equal stages.
// cost, suggest and report take the bubble from the schedule's simulation (step/pipeline_schedule.h);
// these formulas are what the simulation gives with equal stages (tested), suggest's pruning bound
// (step::LeastBubbleFraction) and report's dashed formula line.

#include "planner/pipeline.h"

namespace easyplan::step {

/// One microbatch's time through one stage (the slowest), split as the schedules need it.
struct StageTimes {
  double forward = 0;          ///< F
  double backward_input = 0;   ///< B: the input gradients
  double backward_weight = 0;  ///< W: the weight gradients
  double Backward() const { return backward_input + backward_weight; }
};

/// The pipeline's idle time on the critical path (the bubble) for `microbatches` microbatches of
/// `t` each on a stage: GPipe and 1F1B (p-1)(F+B), interleaved (p-1)(F+B)/V, zero bubble
/// (p-1)(F+B-2W), DualPipe (p/2-1)(F&B+B-3W) with F&B = F+B (the overlap hides communication, not
/// compute). Never negative.
double BubbleSeconds(const planner::PipelineSplit& split, const StageTimes& t);

/// The bubble's share of the step, bubble / (m x (F+B) + bubble): the figure the papers quote
/// ((p-1)/(m+p-1) for GPipe and 1F1B).
double BubbleFraction(const planner::PipelineSplit& split, int64_t microbatches, const StageTimes& t);

}  // namespace easyplan::step

#endif  // EASYPLAN_STEP_PIPELINE_BUBBLE_H_
