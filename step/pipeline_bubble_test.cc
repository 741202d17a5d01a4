#include "step/pipeline_bubble.h"

#include <gtest/gtest.h>

namespace easyplan::step {
namespace {

planner::PipelineSplit Split(int64_t layers, int64_t p, planner::PipelineSchedule s = planner::PipelineSchedule::k1F1B,
                             int64_t v = 1) {
  StatusOr<planner::PipelineSplit> split = planner::SplitLayers(layers, p, v, s, {});
  EXPECT_TRUE(split.ok()) << split.status().ToString();
  return split.ok() ? *split : planner::PipelineSplit();
}

TEST(BubbleSeconds, EachScheduleByItsFormula) {
  const StageTimes t{.forward = 1, .backward_input = 1, .backward_weight = 1};
  EXPECT_DOUBLE_EQ(BubbleSeconds(Split(32, 4), t), 3 * 3);
  EXPECT_DOUBLE_EQ(BubbleSeconds(Split(32, 4, planner::PipelineSchedule::kGpipe), t), 3 * 3);
  EXPECT_DOUBLE_EQ(BubbleSeconds(Split(32, 4, planner::PipelineSchedule::kInterleaved, 2), t), 3 * 3 / 2.0);
  EXPECT_DOUBLE_EQ(BubbleSeconds(Split(32, 4, planner::PipelineSchedule::kZeroBubble), t), 3 * (1 + 2 - 2));
  EXPECT_DOUBLE_EQ(BubbleSeconds(Split(32, 4, planner::PipelineSchedule::kDualPipe), t), 1 * (3 + 2 - 3));
  EXPECT_EQ(BubbleSeconds(Split(32, 1), t), 0);
}

TEST(BubbleFraction, OneF1BIsPMinusOneOverMPlusPMinusOne) {
  const StageTimes t{.forward = 1, .backward_input = 1, .backward_weight = 1};
  EXPECT_DOUBLE_EQ(BubbleFraction(Split(32, 4), 8, t), 3.0 / 11.0);
}

}  // namespace
}  // namespace easyplan::step
