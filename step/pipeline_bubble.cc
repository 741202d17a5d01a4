#include "step/pipeline_bubble.h"

#include <algorithm>

namespace easyplan::step {

double BubbleSeconds(const planner::PipelineSplit& split, const StageTimes& t) {
  if (!split.pipelined()) return 0;
  const double p = static_cast<double>(split.stages);
  const double f = t.forward, b = t.Backward(), w = t.backward_weight;
  double bubble = 0;
  switch (split.schedule) {
    case planner::PipelineSchedule::k1F1B:
      bubble = (p - 1) * (f + b);
      break;
    case planner::PipelineSchedule::kGpipe:  // circular with V > 1: MaxText's (p-1) / (repeats x m + p - 1)
    case planner::PipelineSchedule::kInterleaved:
      bubble = (p - 1) * (f + b) / static_cast<double>(split.virtual_stages);
      break;
    case planner::PipelineSchedule::kZeroBubble:
      bubble = (p - 1) * (f + b - 2 * w);
      break;
    case planner::PipelineSchedule::kDualPipe:
      bubble = (p / 2 - 1) * ((f + b) + b - 3 * w);
      break;
  }
  return std::max(0.0, bubble);
}

double BubbleFraction(const planner::PipelineSplit& split, int64_t microbatches, const StageTimes& t) {
  const double bubble = BubbleSeconds(split, t);
  const double busy = static_cast<double>(std::max<int64_t>(1, microbatches)) * (t.forward + t.Backward());
  return bubble + busy > 0 ? bubble / (bubble + busy) : 0;
}

}  // namespace easyplan::step
