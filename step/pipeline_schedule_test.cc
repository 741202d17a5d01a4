#include "step/pipeline_schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <tuple>

#include "step/pipeline_step.h"

namespace easyplan::step {
namespace {

planner::PipelineSplit Split(int64_t p, planner::PipelineSchedule schedule, int64_t v = 1) {
  StatusOr<planner::PipelineSplit> split = SplitLayers(p * v * 2, p, v, schedule, {});
  EXPECT_TRUE(split.ok()) << split.status().ToString();
  return split.ok() ? *split : planner::PipelineSplit();
}

// "F0 F1 B0 ...": a stage's order as the papers' figures label it.
std::string Text(const std::vector<ScheduledPass>& passes, bool chunks = false) {
  std::string out;
  for (const ScheduledPass& pass : passes) {
    if (!out.empty()) out += ' ';
    out += std::string(PassKindName(pass.kind)) + std::to_string(pass.microbatch);
    if (chunks) out += "." + std::to_string(pass.chunk);
  }
  return out;
}

std::vector<std::vector<ScheduledPass>> Order(const planner::PipelineSplit& split, int64_t m) {
  StatusOr<std::vector<std::vector<ScheduledPass>>> order = ScheduleOrder(split, m);
  EXPECT_TRUE(order.ok()) << order.status().ToString();
  return order.ok() ? *order : std::vector<std::vector<ScheduledPass>>();
}

// Every (microbatch, chunk) runs its forward once and its backward once (whole, or as I and W) on the
// device DeviceOfChunk names.
void ExpectEveryPassOnceOnItsDevice(const planner::PipelineSplit& split, int64_t m) {
  std::map<std::tuple<int64_t, int64_t, char>, int> seen;
  const std::vector<std::vector<ScheduledPass>> order = Order(split, m);
  ASSERT_EQ(static_cast<int64_t>(order.size()), split.stages);
  for (size_t d = 0; d < order.size(); ++d) {
    for (const ScheduledPass& pass : order[d]) {
      EXPECT_EQ(DeviceOfChunk(split, pass.chunk, pass.microbatch, m), static_cast<int64_t>(d));
      const char kind = pass.kind == PassKind::kForward ? 'F' : pass.kind == PassKind::kWeight ? 'W' : 'B';
      ++seen[{pass.microbatch, pass.chunk, kind}];
      if (pass.kind == PassKind::kBackward) ++seen[{pass.microbatch, pass.chunk, 'W'}];
    }
  }
  for (int64_t j = 0; j < m; ++j) {
    for (int64_t c = 0; c < split.Chunks(); ++c) {
      for (char kind : {'F', 'B', 'W'}) EXPECT_EQ((seen[{j, c, kind}]), 1) << kind << j << " chunk " << c;
    }
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(m * split.Chunks() * 3));
}

TEST(ScheduleOrder, GpipeRunsEveryForwardThenEveryBackward) {
  const auto order = Order(Split(4, planner::PipelineSchedule::kGpipe), 3);
  EXPECT_EQ(Text(order[2]), "F0 F1 F2 B0 B1 B2");
  ExpectEveryPassOnceOnItsDevice(Split(4, planner::PipelineSchedule::kGpipe), 3);
}

// Circular GPipe, PyTorch's ScheduleLoopedBFS: every microbatch through local chunk 0, then 1; the
// backwards from the last local chunk, the microbatches in reverse. Model chunk = local chunk x p + stage.
TEST(ScheduleOrder, CircularGpipeRunsBreadthFirstAsLoopedBfs) {
  const planner::PipelineSplit split = Split(2, planner::PipelineSchedule::kGpipe, 2);
  const auto order = Order(split, 3);
  EXPECT_EQ(Text(order[0], true), "F0.0 F1.0 F2.0 F0.2 F1.2 F2.2 B2.2 B1.2 B0.2 B2.0 B1.0 B0.0");
  EXPECT_EQ(Text(order[1], true), "F0.1 F1.1 F2.1 F0.3 F1.3 F2.3 B2.3 B1.3 B0.3 B2.1 B1.1 B0.1");
  ExpectEveryPassOnceOnItsDevice(split, 3);
  ExpectEveryPassOnceOnItsDevice(Split(4, planner::PipelineSchedule::kGpipe, 3), 8);
}

// Megatron-LM's forward_backward_pipelining_without_interleaving: p - i - 1 warm-up forwards, then one
// forward one backward, then the cool-down backwards.
TEST(ScheduleOrder, OneF1BWarmsUpThenAlternatesThenCoolsDown) {
  const auto order = Order(Split(4, planner::PipelineSchedule::k1F1B), 6);
  EXPECT_EQ(Text(order[0]), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
  EXPECT_EQ(Text(order[2]), "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 B5");
  EXPECT_EQ(Text(order[3]), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");
  ExpectEveryPassOnceOnItsDevice(Split(4, planner::PipelineSchedule::k1F1B), 6);
}

// forward_backward_pipelining_with_interleaving, p = 2, V = 2, m = 4: the schedule table takes
// microbatches 0-1 through local chunk 0, then chunk 1, then 2-3 likewise; stage 0 warms up with
// (2 - 0 - 1) x 2 + (2 - 1) x 2 = 4; the backward takes the local chunks in reverse. Model chunk = local
// chunk x p + stage.
TEST(ScheduleOrder, InterleavedFollowsMegatronsScheduleTable) {
  const planner::PipelineSplit split = Split(2, planner::PipelineSchedule::kInterleaved, 2);
  const auto order = Order(split, 4);
  EXPECT_EQ(Text(order[0], true), "F0.0 F1.0 F0.2 F1.2 F2.0 B0.2 F3.0 B1.2 F2.2 B0.0 F3.2 B1.0 B2.2 B3.2 B2.0 B3.0");
  // Stage 1 warms up with 2: (2 - 1 - 1) x 2 + 2.
  EXPECT_EQ(Text(order[1], true), "F0.1 F1.1 F0.3 B0.3 F1.3 B1.3 F2.1 B0.1 F3.1 B1.1 F2.3 B2.3 F3.3 B3.3 B2.1 B3.1");
  ExpectEveryPassOnceOnItsDevice(split, 4);
  ExpectEveryPassOnceOnItsDevice(Split(4, planner::PipelineSchedule::kInterleaved, 3), 8);
}

// ZB-H1 (PyTorch's ScheduleInterleavedZeroBubble with one stage per rank): 1F1B's warm-up, the backward
// split into I and W, stage i's W's deferred by i steady-state rounds; the rest at the end.
TEST(ScheduleOrder, ZeroBubbleDefersStageIsWeightsByIRounds) {
  const auto order = Order(Split(4, planner::PipelineSchedule::kZeroBubble), 6);
  EXPECT_EQ(Text(order[0]), "F0 F1 F2 F3 I0 W0 F4 I1 W1 F5 I2 W2 I3 W3 I4 W4 I5 W5");
  EXPECT_EQ(Text(order[3]), "F0 I0 F1 I1 F2 I2 F3 I3 W0 F4 I4 W1 F5 I5 W2 W3 W4 W5");
  ExpectEveryPassOnceOnItsDevice(Split(4, planner::PipelineSchedule::kZeroBubble), 6);
}

// DualPipe.step() with 4 ranks and 8 microbatches (4 from each end). Rank 0, half_rank 0: step 1 runs
// (2 - 0 - 1) x 2 forwards of its own direction, step 2 one F0 F1, step 3 one B1 (zero bubble) W F1,
// step 4 (8/2 - 4 + 0 + 1 = 1) the pairs F0&B1 and F1&B0, step 5 one B1 and F1&B0, step 6
// B1 and, zero bubble from there, B0, step 7 one W and B0 (zero bubble), step 8 one W. Microbatches 4-7 enter at rank 3
// and reach rank 0 at chunk 3.
TEST(ScheduleOrder, DualPipeFollowsDualPipeStep) {
  const planner::PipelineSplit split = Split(4, planner::PipelineSchedule::kDualPipe);
  const auto order = Order(split, 8);
  EXPECT_EQ(Text(order[0], true),
            "F0.0 F1.0 F2.0 F4.3 I4.3 W4.3 F5.3 F3.0 B5.3 F6.3 B0.0 B6.3 F7.3 B1.0 B7.3 I2.0 W2.0 I3.0 W3.0");
  // Steps 4 and 5 run F3&B5, F6&B0 and F7&B1 as pairs: the forward of each is marked.
  std::vector<size_t> pairs;
  for (size_t i = 0; i < order[0].size(); ++i) {
    if (order[0][i].overlapped) pairs.push_back(i);
  }
  EXPECT_EQ(pairs, (std::vector<size_t>{7, 9, 12}));
  // Off the middle, step 2's F0 is sent after the F1 that follows it.
  EXPECT_EQ(order[0][2].sent_after, 3);
  // Rank 1 is a middle rank (num_ranks // 2 - 1): its last step-2 F1 is sent after step 4's first F0,
  // which is itself sent after the B1 that follows it.
  const std::vector<ScheduledPass>& middle = order[1];
  int deferred = 0;
  for (size_t i = 0; i < middle.size(); ++i) {
    if (!middle[i].sent_after) continue;
    ++deferred;
    EXPECT_GT(*middle[i].sent_after, static_cast<int64_t>(i));
  }
  EXPECT_EQ(deferred, 2);
  ExpectEveryPassOnceOnItsDevice(split, 8);
  ExpectEveryPassOnceOnItsDevice(Split(8, planner::PipelineSchedule::kDualPipe), 20);
}

TEST(ScheduleOrder, TooFewMicrobatchesIsRefusedAsCheckMicrobatchesRefusesThem) {
  StatusOr<std::vector<std::vector<ScheduledPass>>> order =
      ScheduleOrder(Split(4, planner::PipelineSchedule::k1F1B), 3);
  ASSERT_FALSE(order.ok());
  EXPECT_NE(order.status().diag().message.find("--microbatches 3 is fewer than the 4 pipeline stages"),
            std::string::npos);
}

Timeline Simulate(const planner::PipelineSplit& split, int64_t m, const std::vector<StageTimes>& times) {
  StatusOr<Timeline> timeline = SimulateSchedule(split, m, times);
  EXPECT_TRUE(timeline.ok()) << timeline.status().ToString();
  return timeline.ok() ? *timeline : Timeline();
}

std::vector<StageTimes> Equal(int64_t p, double f, double b, double w) {
  return std::vector<StageTimes>(static_cast<size_t>(p), StageTimes{f, b, w});
}

// Equal stages: 1F1B's step is (m + p - 1) x (F + B), Narayanan et al.'s count.
TEST(SimulateSchedule, OneF1BWithEqualStagesTakesMPlusPMinusOneMicrobatches) {
  for (int64_t p : {2, 4, 8}) {
    for (int64_t m : {p, 2 * p, 3 * p + 1}) {
      const Timeline t = Simulate(Split(p, planner::PipelineSchedule::k1F1B), m, Equal(p, 1.0, 1.25, 0.75));
      EXPECT_NEAR(t.end, static_cast<double>(m + p - 1) * 3.0, 1e-9) << "p=" << p << " m=" << m;
    }
  }
}

// Equal stages: every schedule ends at m x (F + B) plus its bubble formula (planner/pipeline.h), which
// the timeline computes rather than assumes. DualPipe's formula (the DualPipe README's) holds with
// F = B = W, the README's own assumption.
TEST(SimulateSchedule, EqualStagesEndAtMTimesThePaceAndTheBubble) {
  struct Case {
    planner::PipelineSchedule schedule;
    int64_t p, v, m;
    StageTimes t;
  };
  const Case cases[] = {
      {planner::PipelineSchedule::kGpipe, 4, 1, 8, {1.0, 1.3, 0.9}},
      {planner::PipelineSchedule::kGpipe, 4, 2, 8, {1.0, 1.3, 0.9}},
      {planner::PipelineSchedule::kGpipe, 8, 3, 16, {1.0, 1.3, 0.9}},
      {planner::PipelineSchedule::kGpipe, 4, 4, 4, {1.0, 1.3, 0.9}},
      {planner::PipelineSchedule::k1F1B, 8, 1, 16, {1.0, 1.3, 0.9}},
      {planner::PipelineSchedule::kInterleaved, 4, 2, 8, {1.0, 1.3, 0.9}},
      {planner::PipelineSchedule::kInterleaved, 8, 3, 16, {1.0, 1.3, 0.9}},
      {planner::PipelineSchedule::kInterleaved, 4, 2, 4, {1.0, 1.3, 0.9}},
      {planner::PipelineSchedule::kZeroBubble, 4, 1, 8, {1.0, 1.3, 0.9}},
      {planner::PipelineSchedule::kZeroBubble, 8, 1, 24, {1.0, 2.0, 0.5}},
      {planner::PipelineSchedule::kDualPipe, 4, 1, 8, {1.0, 1.0, 1.0}},
      {planner::PipelineSchedule::kDualPipe, 8, 1, 20, {1.0, 1.0, 1.0}},
      {planner::PipelineSchedule::kDualPipe, 16, 1, 32, {1.0, 1.0, 1.0}},
  };
  for (const Case& c : cases) {
    const planner::PipelineSplit split = Split(c.p, c.schedule, c.v);
    const Timeline t = Simulate(split, c.m, Equal(c.p, c.t.forward, c.t.backward_input, c.t.backward_weight));
    const double expected = static_cast<double>(c.m) * (c.t.forward + c.t.Backward()) + BubbleSeconds(split, c.t);
    EXPECT_NEAR(t.end, expected, 1e-9 * expected)
        << planner::PipelineScheduleName(c.schedule) << " p=" << c.p << " v=" << c.v << " m=" << c.m;
  }
}

// With F, B and W apart, DualPipe's step is shorter than the README's formula (which counts F&B + B - 3W
// per half-stage of bubble), and ZB-H1's longer than the paper's when W exceeds F (its W's no longer fit
// the bubbles they fill).
TEST(SimulateSchedule, FormulasAreApproximationsTheTimelineComputes) {
  const planner::PipelineSplit dual = Split(8, planner::PipelineSchedule::kDualPipe);
  const StageTimes t{1.0, 1.3, 0.9};
  const double dual_formula = 16.0 * (t.forward + t.Backward()) + BubbleSeconds(dual, t);
  EXPECT_LT(Simulate(dual, 16, Equal(8, 1.0, 1.3, 0.9)).end, dual_formula - 0.5);
  const planner::PipelineSplit zero = Split(4, planner::PipelineSchedule::kZeroBubble);
  const StageTimes heavy{1.0, 0.5, 1.5};
  const double zero_formula = 8.0 * (heavy.forward + heavy.Backward()) + BubbleSeconds(zero, heavy);
  EXPECT_NEAR(Simulate(zero, 8, Equal(4, 1.0, 0.5, 1.5)).end, zero_formula + 3.0, 1e-9);
}

// Unequal stages: no box overlaps another on its device, each pass starts after the one it needs, and
// the slowest stage's work bounds the step from below and the 1F1B formula, which prices every step of
// the fill and the drain at the slowest stage, from above.
TEST(SimulateSchedule, UnequalStagesRespectEveryDependency) {
  for (planner::PipelineSchedule schedule :
       {planner::PipelineSchedule::kGpipe, planner::PipelineSchedule::k1F1B, planner::PipelineSchedule::kInterleaved,
        planner::PipelineSchedule::kZeroBubble, planner::PipelineSchedule::kDualPipe}) {
    const int64_t p = 4, m = 8, v = schedule == planner::PipelineSchedule::kInterleaved ? 2 : 1;
    const planner::PipelineSplit split = Split(p, schedule, v);
    const std::vector<StageTimes> times = {{1.2, 1.1, 1.0}, {0.8, 0.9, 0.7}, {0.9, 1.0, 0.8}, {1.5, 1.6, 1.2}};
    const Timeline t = Simulate(split, m, times);
    size_t passes = 0;
    for (const std::vector<ScheduledPass>& device : Order(split, m)) passes += device.size();
    ASSERT_EQ(t.boxes.size(), passes);
    std::map<std::tuple<char, int64_t, int64_t>, TimelineBox> by_pass;
    std::vector<double> last_end(static_cast<size_t>(p), 0.0);
    for (const TimelineBox& box : t.boxes) {
      EXPECT_GE(box.start, last_end[static_cast<size_t>(box.device)] - 1e-12)
          << planner::PipelineScheduleName(schedule);
      last_end[static_cast<size_t>(box.device)] = box.end;
      const char kind = box.kind == PassKind::kForward ? 'F' : box.kind == PassKind::kWeight ? 'W' : 'B';
      by_pass[{kind, box.microbatch, box.chunk}] = box;
    }
    const int64_t chunks = split.Chunks();
    for (const auto& [key, box] : by_pass) {
      const auto [kind, j, c] = key;
      std::optional<std::tuple<char, int64_t, int64_t>> needs;
      if (kind == 'F' && c > 0) needs = {'F', j, c - 1};
      if (kind == 'B') needs = c + 1 < chunks ? std::make_tuple('B', j, c + 1) : std::make_tuple('F', j, c);
      if (kind == 'W') needs = {'B', j, c};
      if (needs) {
        EXPECT_GE(box.start, by_pass.at(*needs).end - 1e-12)
            << planner::PipelineScheduleName(schedule) << " " << kind << j;
      }
    }
    double slowest = 0;
    for (double busy : t.busy) slowest = std::max(slowest, busy);
    EXPECT_GE(t.end, slowest - 1e-12);
    if (schedule == planner::PipelineSchedule::k1F1B) {
      const StageTimes& pace = times[3];
      EXPECT_LT(t.end, static_cast<double>(m) * (pace.forward + pace.Backward()) + BubbleSeconds(split, pace));
    }
  }
}

// Every count planner::CheckMicrobatches accepts runs to the end on every schedule: no order waits for a pass
// that never comes (SimulateSchedule's deadlock error).
TEST(SimulateSchedule, EveryAcceptedCountRunsToTheEnd) {
  for (planner::PipelineSchedule schedule :
       {planner::PipelineSchedule::kGpipe, planner::PipelineSchedule::k1F1B, planner::PipelineSchedule::kInterleaved,
        planner::PipelineSchedule::kZeroBubble, planner::PipelineSchedule::kDualPipe}) {
    for (int64_t p = 2; p <= 8; ++p) {
      const bool chunks =
          schedule == planner::PipelineSchedule::kInterleaved || schedule == planner::PipelineSchedule::kGpipe;
      for (int64_t v = 1; v <= (chunks ? 3 : 1); ++v) {
        if (!planner::CheckSchedule(p, v, schedule).ok()) continue;  // dualpipe on an odd p
        const planner::PipelineSplit split = Split(p, schedule, v);
        for (int64_t m = 1; m <= 4 * p + 1; ++m) {
          if (!planner::CheckMicrobatches(split, m).ok()) continue;
          StatusOr<Timeline> t = SimulateSchedule(split, m, Equal(p, 1.0, 1.1, 0.9));
          ASSERT_TRUE(t.ok()) << t.status().ToString();
          // A forward and a backward per microbatch and chunk, and a W for each backward split in two.
          const int64_t split_backwards = std::count_if(t->boxes.begin(), t->boxes.end(), [](const TimelineBox& b) {
            return b.kind == PassKind::kBackwardInput;
          });
          EXPECT_EQ(static_cast<int64_t>(t->boxes.size()), 2 * m * split.Chunks() + split_backwards)
              << planner::PipelineScheduleName(schedule) << " p=" << p << " m=" << m;
          // The bound a caller checks before building the timeline holds it, exactly but for DualPipe's
          // backwards that do not split.
          const int64_t bound = SchedulePasses(split, m);
          if (schedule == planner::PipelineSchedule::kDualPipe) {
            EXPECT_LE(static_cast<int64_t>(t->boxes.size()), bound) << "p=" << p << " m=" << m;
          } else {
            EXPECT_EQ(static_cast<int64_t>(t->boxes.size()), bound)
                << planner::PipelineScheduleName(schedule) << " p=" << p;
          }
          if (schedule == planner::PipelineSchedule::kZeroBubble) {
            EXPECT_EQ(split_backwards, m * split.Chunks());
          }
          double busy = 0;
          for (double b : t->busy) busy = std::max(busy, b);
          EXPECT_GE(t->end, busy - 1e-9);
        }
      }
    }
  }
}

// The issue 44 command: pp=32 dualpipe at 1,048,576 microbatches is 100,663,296 passes, known without
// building them; a count past int64 saturates instead of wrapping to a small bound.
TEST(SchedulePasses, IsKnownBeforeTheOrderIsBuiltAndNeverWraps) {
  EXPECT_EQ(SchedulePasses(Split(32, planner::PipelineSchedule::kDualPipe), 1'048'576), 100'663'296);
  EXPECT_EQ(SchedulePasses(Split(4, planner::PipelineSchedule::kInterleaved, 2), 8), 4 * 2 * 8 * 2);
  EXPECT_EQ(SchedulePasses(Split(4, planner::PipelineSchedule::k1F1B), int64_t{1} << 62),
            std::numeric_limits<int64_t>::max());
}

// An uneven 1F1B, worked by hand (p = 2, m = 2; stage 0: F 1, B 2; stage 1: F 2, B 3; no W apart):
//   stage 0 runs F0 F1 B0 B1, stage 1 runs F0 B0 F1 B1 (p - i - 1 warm-up forwards).
//   stage 0: F0 [0, 1], F1 [1, 2]; stage 1: F0 [1, 3], B0 [3, 6], F1 [6, 8], B1 [8, 11];
//   stage 0: B0 [6, 8] (after stage 1's B0), B1 [11, 13] (after stage 1's B1).
// The step ends at 13; stage 1 is busy 10 of it, so the bubble is 3 where the 1F1B formula at the slowest
// stage's pace gives (p - 1)(F + B) = 5: the fill and the drain run at each stage's own speed.
TEST(SimulateSchedule, AnUnevenOneF1BRunsTheHandWorkedTimeline) {
  const planner::PipelineSplit split = Split(2, planner::PipelineSchedule::k1F1B);
  const Timeline t = Simulate(split, 2, {{1, 2, 0}, {2, 3, 0}});
  EXPECT_DOUBLE_EQ(t.end, 13);
  ASSERT_EQ(t.busy.size(), 2u);
  EXPECT_DOUBLE_EQ(t.busy[0], 6);
  EXPECT_DOUBLE_EQ(t.busy[1], 10);
  std::vector<std::tuple<int64_t, char, int64_t, double, double>> boxes;
  for (const TimelineBox& b : t.boxes) {
    boxes.emplace_back(b.device, b.kind == PassKind::kForward ? 'F' : 'B', b.microbatch, b.start, b.end);
  }
  const std::vector<std::tuple<int64_t, char, int64_t, double, double>> want = {
      {0, 'F', 0, 0, 1}, {0, 'F', 1, 1, 2}, {0, 'B', 0, 6, 8}, {0, 'B', 1, 11, 13},
      {1, 'F', 0, 1, 3}, {1, 'B', 0, 3, 6}, {1, 'F', 1, 6, 8}, {1, 'B', 1, 8, 11}};
  EXPECT_EQ(boxes, want);
  EXPECT_DOUBLE_EQ(BubbleSeconds(split, {2, 3, 0}), 5);
}

// Random stage times, each stage's F, B and W drawn within `spread` of each other; with `last_slowest` the
// last stage, which runs the head, scaled up to the slowest's F + B. The least, over every schedule, count
// and trial, of the simulated step over m x the mean stage's F + B stretched by LeastBubbleFraction.
double WorstStepOverTheFloor(double spread, bool last_slowest) {
  std::mt19937 random(45);
  std::uniform_real_distribution<double> time(1.0, spread);
  double worst = std::numeric_limits<double>::infinity();
  for (planner::PipelineSchedule schedule :
       {planner::PipelineSchedule::kGpipe, planner::PipelineSchedule::k1F1B, planner::PipelineSchedule::kInterleaved,
        planner::PipelineSchedule::kZeroBubble, planner::PipelineSchedule::kDualPipe}) {
    for (int64_t p : {2, 4, 6, 8}) {
      const bool chunks =
          schedule == planner::PipelineSchedule::kInterleaved || schedule == planner::PipelineSchedule::kGpipe;
      for (int64_t v = 1; v <= (chunks ? 3 : 1); ++v) {
        if (!planner::CheckSchedule(p, v, schedule).ok()) continue;
        const planner::PipelineSplit split = Split(p, schedule, v);
        for (int64_t m : {p, 2 * p, 3 * p + 2}) {
          if (!planner::CheckMicrobatches(split, m).ok()) continue;
          for (int trial = 0; trial < 10; ++trial) {
            std::vector<StageTimes> times;
            for (int64_t s = 0; s < p; ++s) times.push_back({time(random), time(random), time(random)});
            if (last_slowest) {
              double slowest = 0;
              for (const StageTimes& t : times) slowest = std::max(slowest, t.forward + t.Backward());
              StageTimes& last = times.back();
              const double k = slowest / (last.forward + last.Backward());
              last = {last.forward * k, last.backward_input * k, last.backward_weight * k};
            }
            double mean = 0;
            for (const StageTimes& t : times) mean += (t.forward + t.Backward()) / static_cast<double>(p);
            const double floor = static_cast<double>(m) * mean * (1 + LeastBubbleFraction(split, m));
            worst = std::min(worst, Simulate(split, m, times).end / floor);
          }
        }
      }
    }
  }
  return worst;
}

// suggest prunes a pipelined mesh with LeastBubbleFraction: the flat candidates' least compute (m x the
// mean stage's F + B: every device of a pipeline does its share) stretched by the schedule's least bubble.
// Whenever the last stage, which runs the head, is the slowest, no stage times beat it, 1,000-fold apart
// or not: the first microbatch crosses every earlier stage before the slowest and every later microbatch
// queues there, so the step is at least their sum and m - 1 of the slowest, (m + p - 1) x the mean.
TEST(SimulateSchedule, NoStageTimesBeatTheLeastBubbleSuggestPrunesWithWhenTheHeadsStageIsSlowest) {
  for (double spread : {1.2, 3.0, 40.0, 1000.0}) EXPECT_GE(WorstStepOverTheFloor(spread, true), 1 - 1e-12) << spread;
  const planner::PipelineSplit one = Split(4, planner::PipelineSchedule::k1F1B);
  EXPECT_DOUBLE_EQ(LeastBubbleFraction(one, 8), 3.0 / 8.0);  // (p - 1) / m: the formula, as equal stages leave it
  EXPECT_DOUBLE_EQ(LeastBubbleFraction(Split(4, planner::PipelineSchedule::kZeroBubble), 8), 0);
}

// When an earlier stage is the slowest (a middle stage given an extra layer that outweighs the head) the fill
// behind it runs faster than the formula counts: the simulated step can come in under the floor. With
// stages within 20% of each other, by at most 4%; suggest may prune a pipelined mesh that close to the best
// flat step (docs/PIPELINE.md).
TEST(SimulateSchedule, AnEarlierSlowestStageCanUndercutTheFloorByAFewPercent) {
  const double worst = WorstStepOverTheFloor(1.2, false);
  EXPECT_LT(worst, 1.0);
  EXPECT_GE(worst, 0.96);
}

TEST(SimulateSchedule, StageTimesMustCoverEveryStage) {
  StatusOr<Timeline> t = SimulateSchedule(Split(4, planner::PipelineSchedule::k1F1B), 4, Equal(3, 1, 1, 1));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().kind(), ErrorKind::kInternal);
}

}  // namespace
}  // namespace easyplan::step
