// The report's pipeline timeline (docs/PIPELINE.md, "The timeline"): cost's pipelined step run through
// its schedule's order, each box its stage's pass as cost prices it.
#include "api/pipeline_timeline.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "api/cost.h"
#include "api/pipelined_cost_options.h"
#include "api/test_models.h"
#include "step/pipeline_schedule.h"

namespace easyplan::api {
namespace {

struct Priced {
  step::PipelineStep step;
  planner::PipelineSplit split;
  double step_time_s = 0;
};

Priced PricedStep(const std::string& schedule, int64_t microbatches, int64_t virtual_stages = 1) {
  static const std::shared_ptr<const Model> model =
      LoadExample("llama-3.1-8b", {.sets = {"gradient_checkpointing=nothing_saveable", "attn_mechanism=flash_attn2"}});
  StatusOr<CostResult> cost = Cost(model, PipelinedCostOptions("pp=4,tp=2", microbatches, schedule, virtual_stages));
  EXPECT_TRUE(cost.ok()) << cost.status().ToString();
  if (!cost.ok() || !cost->estimate || !cost->estimate->pipeline) {
    ADD_FAILURE() << schedule << ": no pipelined estimate";
    return {};
  }
  return {*cost->estimate->pipeline, cost->plan.pipeline, cost->estimate->step.step_time_s};
}

// The page's timeline of `step` as its stages are now: cost keeps no passes (only report asks for them,
// StepSettings::keep_timeline), and some tests change the stages, so the schedule is simulated here.
Json TimelineOf(step::PipelineStep step, const planner::PipelineSplit& split) {
  StatusOr<step::Timeline> timeline = step::SimulateSchedule(split, step.microbatches, step::PipelineStageTimes(step));
  EXPECT_TRUE(timeline.ok()) << timeline.status().ToString();
  if (timeline.ok()) step.timeline = *std::move(timeline);
  StatusOr<Json> json = PipelineTimelineJson(step, split);
  EXPECT_TRUE(json.ok()) << json.status().ToString();
  return json.ok() ? *json : Json::object();
}

struct ScheduleCase {
  const char* schedule;
  int64_t microbatches;
  int64_t virtual_stages;
};
constexpr ScheduleCase kSchedules[] = {
    {"gpipe", 8, 1}, {"1f1b", 8, 1}, {"interleaved", 8, 2}, {"zero-bubble", 8, 1}, {"dualpipe", 8, 1},
};

// The stage times are PricePipeline's pace for every stage: for the slowest they are the pace itself.
TEST(PipelineTimeline, TheSlowestStagesTimesAreCostsPace) {
  for (const char* schedule : {"1f1b", "interleaved"}) {
    const Priced p = PricedStep(schedule, 8, std::string(schedule) == "interleaved" ? 2 : 1);
    const std::vector<step::StageTimes> times = step::PipelineStageTimes(p.step);
    ASSERT_EQ(times.size(), 4u);
    const step::StageTimes& slow = times[static_cast<size_t>(p.step.slowest)];
    EXPECT_DOUBLE_EQ(slow.forward, p.step.pace.forward) << schedule;
    EXPECT_DOUBLE_EQ(slow.backward_input, p.step.pace.backward_input) << schedule;
    EXPECT_DOUBLE_EQ(slow.backward_weight, p.step.pace.backward_weight) << schedule;
    EXPECT_NEAR(slow.forward + slow.Backward(), p.step.stages[static_cast<size_t>(p.step.slowest)].microbatch_s,
                1e-12 * slow.forward);
  }
}

// Every box is as long as its stage's F, B, I or W (a chunk's share under interleaving), the timeline ends
// with its last box, and cost's pipeline part, m x pace + bubble, is the step time less what runs outside
// the pipeline. The slowest stage's own work bounds the timeline from below, and cost's formula, which
// takes the slowest stage's time at every step of the fill and the drain, from above.
TEST(PipelineTimeline, EveryBoxIsItsStagesPassAsCostPricesIt) {
  for (const ScheduleCase& c : kSchedules) {
    const Priced p = PricedStep(c.schedule, c.microbatches, c.virtual_stages);
    const Json t = TimelineOf(p.step, p.split);
    const std::vector<step::StageTimes> times = step::PipelineStageTimes(p.step);
    const double share = 1.0 / static_cast<double>(c.virtual_stages);
    ASSERT_TRUE(t["boxes"].is_array()) << c.schedule;
    double last = 0;
    std::vector<double> busy(4, 0.0);
    for (const Json& box : t["boxes"]) {
      const int64_t device = box[0].get<int64_t>(), chunk = box[3].get<int64_t>();
      const std::string kind = box[1].get<std::string>();
      const double start = box[4].get<double>(), end = box[5].get<double>();
      const step::StageTimes& s = times[static_cast<size_t>(step::StageOfChunk(p.split, chunk))];
      const double expected = share * (kind == "F"   ? s.forward
                                       : kind == "B" ? s.Backward()
                                       : kind == "I" ? s.backward_input
                                                     : s.backward_weight);
      EXPECT_NEAR(end - start, expected, 1e-12 * expected) << c.schedule << " " << box.dump();
      EXPECT_EQ(device, step::DeviceOfChunk(p.split, chunk, box[2].get<int64_t>(), c.microbatches));
      busy[static_cast<size_t>(device)] += end - start;
      last = std::max(last, end);
    }
    const double end = t["end_s"].get<double>();
    EXPECT_DOUBLE_EQ(end, last) << c.schedule;
    const double outside = p.step.exposed_parameter_s + p.step.exposed_gradient_s + p.step.update_s;
    const double cost = t["cost_pipeline_s"].get<double>();
    EXPECT_NEAR(cost, p.step_time_s - outside, 1e-12 * p.step_time_s) << c.schedule;
    // One timing: cost's pipeline is this timeline, and its bubble the busiest device's idle time in it.
    EXPECT_DOUBLE_EQ(cost, end) << c.schedule;
    const double busiest = *std::max_element(busy.begin(), busy.end());
    EXPECT_NEAR(p.step.bubble_s, end - busiest, 1e-9 * end) << c.schedule;
    for (size_t d = 0; d < busy.size(); ++d) {
      EXPECT_NEAR(t["idle_s"][d].get<double>(), end - busy[d], 1e-9 * end) << c.schedule << " device " << d;
    }
  }
}

// The stages made equal (each the slowest's): the timeline ends at m x pace + each schedule's bubble
// formula (step::BubbleSeconds), within rounding, and for 1F1B at (m + p - 1) x (F + B). DualPipe's
// formula (the DualPipe README's) holds only with F = B = W, which cost's times are not: there the
// timeline ends sooner.
TEST(PipelineTimeline, EqualStagesEndAtMTimesThePacePlusTheBubble) {
  for (const ScheduleCase& c : kSchedules) {
    Priced p = PricedStep(c.schedule, c.microbatches, c.virtual_stages);
    const step::StageStep slow = p.step.stages[static_cast<size_t>(p.step.slowest)];
    for (step::StageStep& stage : p.step.stages) {
      const int64_t index = stage.stage;
      stage = slow;
      stage.stage = index;
    }
    const Json t = TimelineOf(p.step, p.split);
    const double end = t["end_s"].get<double>();
    const double pace = p.step.pace.forward + p.step.pace.Backward();
    const double formula = static_cast<double>(c.microbatches) * pace + step::BubbleSeconds(p.split, p.step.pace);
    if (std::string(c.schedule) == "dualpipe") {
      EXPECT_LT(end, formula);
      continue;
    }
    EXPECT_NEAR(end, formula, 1e-9 * formula) << c.schedule;
    if (std::string(c.schedule) == "1f1b") {
      EXPECT_NEAR(end, static_cast<double>(c.microbatches + 4 - 1) * pace, 1e-9 * formula);
    }
  }
}

TEST(PipelineTimeline, SaysItsScheduleAndWhereItsOrderComesFrom) {
  const Priced p = PricedStep("interleaved", 8, 2);
  const Json t = TimelineOf(p.step, p.split);
  EXPECT_EQ(t["schedule"], "interleaved");
  EXPECT_NE(t["order"].get<std::string>().find("forward_backward_pipelining_with_interleaving"), std::string::npos);
  EXPECT_EQ(t["bubble_formula"], "(p-1)(F+B)/V");
  EXPECT_EQ(t["chunks"], 8);
  // Each box's send: one boundary per chunk, sends_per_microbatch = V of them per stage.
  EXPECT_DOUBLE_EQ(t["exchange_s"].get<double>(), p.step.send_s);
  EXPECT_EQ(t["boxes"].size(), 8u * 8u * 2u);
}

}  // namespace
}  // namespace easyplan::api
