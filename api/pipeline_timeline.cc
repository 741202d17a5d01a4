#include "api/pipeline_timeline.h"

#include <fmt/format.h>

#include <algorithm>

#include "step/pipeline_schedule.h"

namespace easyplan::api {
namespace {

// Where each schedule's order comes from and the bubble formula the timeline gives for equal stages
// (planner/pipeline.h), as the page says them.
struct ScheduleText {
  const char* order;
  const char* bubble;
};

ScheduleText TextOf(const planner::PipelineSplit& split) {
  switch (split.schedule) {
    case planner::PipelineSchedule::kGpipe:
      if (split.virtual_stages > 1) {
        return {
            "circular GPipe: each stage runs V model chunks, every microbatch through chunk 0, then chunk 1, ...; "
            "then every backward, the last chunk first (PyTorch's ScheduleLoopedBFS, MaxText's "
            "num_pipeline_repeats)",
            "(p-1)(F+B)/V"};
      }
      return {"GPipe: every forward, then every backward (PyTorch's ScheduleGPipe)", "(p-1)(F+B)"};
    case planner::PipelineSchedule::k1F1B:
      return {
          "1F1B: stage i runs p-i-1 warm-up forwards, then one forward and one backward, then the cool-down "
          "backwards (Megatron-LM's forward_backward_pipelining_without_interleaving)",
          "(p-1)(F+B)"};
    case planner::PipelineSchedule::kInterleaved:
      return {
          "interleaved 1F1B: each stage runs V model chunks, the microbatches p at a time through each chunk "
          "(Megatron-LM's forward_backward_pipelining_with_interleaving)",
          "(p-1)(F+B)/V"};
    case planner::PipelineSchedule::kZeroBubble:
      return {
          "ZB-H1: 1F1B with the backward split into its input gradients (B) and its weight gradients (W); "
          "stage i defers its W's by i rounds into the bubble at the end (Qi et al., ICLR 2024; PyTorch's "
          "ScheduleInterleavedZeroBubble)",
          "(p-1)(F+B-2W)"};
    case planner::PipelineSchedule::kDualPipe:
      return {
          "DualPipe: half the microbatches enter at each end, each device holding stages s and p-1-s; a "
          "forward and a backward outlined together run overlapped (DualPipe.step() of "
          "github.com/deepseek-ai/DualPipe, the DeepSeek-V3 report's figure 5)",
          "(p/2-1)(F&B+B-3W)"};
  }
  return {"", ""};
}

}  // namespace

Status CheckTimelineSize(const planner::PipelineSplit& split, int64_t microbatches, const Limits& limits) {
  if (!split.pipelined()) return Status();
  const int64_t passes = step::SchedulePasses(split, microbatches);
  if (passes <= limits.max_timeline_passes) return Status();
  return Status::BadInput(
      {},
      fmt::format("the pipeline timeline would simulate {} passes (pp={}{} x --microbatches {} x {} passes each "
                  "under {}): more than the limit of {}",
                  passes, split.stages,
                  split.virtual_stages > 1 ? fmt::format(" x --virtual-stages {}", split.virtual_stages) : "",
                  microbatches, step::PassesPerChunk(split.schedule) == 3 ? "F, B and W: 3" : "F and B: 2",
                  planner::PipelineScheduleName(split.schedule), limits.max_timeline_passes),
      {LimitNote("--max-timeline-passes", static_cast<uint64_t>(limits.max_timeline_passes)),
       "or fewer --microbatches; `cost` prices the same step without the timeline"});
}

StatusOr<Json> PipelineTimelineJson(const step::PipelineStep& step, const planner::PipelineSplit& split) {
  const std::vector<step::StageTimes> times = step::PipelineStageTimes(step);
  // The simulation that priced the step (StepSettings::keep_timeline), not a second run of the schedule.
  const step::Timeline& timeline = step.timeline;
  if (timeline.boxes.empty()) {
    return Status::Internal("PipelineTimelineJson: the step was priced without keeping its timeline");
  }
  const ScheduleText text = TextOf(split);
  Json out = Json::object();
  out["schedule"] = std::string(planner::PipelineScheduleName(split.schedule));
  out["order"] = text.order;
  out["stages"] = split.stages;
  out["virtual_stages"] = split.virtual_stages;
  out["chunks"] = split.Chunks();
  out["chunk_layers"] = split.chunk_layers;
  out["microbatches"] = step.microbatches;
  Json stage_times = Json::array();
  for (const step::StageTimes& t : times) {
    stage_times.push_back(Json::array({t.forward, t.backward_input, t.backward_weight}));
  }
  out["stage_times"] = std::move(stage_times);
  // Each F, B and I box ends with one send per boundary it crosses: a chunk's share of the stage's.
  out["exchange_s"] =
      static_cast<double>(step.sends_per_microbatch) * step.send_s / static_cast<double>(split.virtual_stages);
  out["send_link"] = step.send_link;
  const int64_t boxes = static_cast<int64_t>(timeline.boxes.size());
  if (boxes <= kMaxTimelineBoxes) {
    Json list = Json::array();
    for (const step::TimelineBox& box : timeline.boxes) {
      list.push_back(Json::array({box.device, std::string(step::PassKindName(box.kind)), box.microbatch, box.chunk,
                                  box.start, box.end, box.overlapped ? 1 : 0}));
    }
    out["boxes"] = std::move(list);
    out["boxes_note"] = nullptr;
  } else {
    out["boxes"] = nullptr;
    out["boxes_note"] = fmt::format(
        "{} passes, more than the {} the page draws: the figures below are the whole "
        "timeline's",
        boxes, kMaxTimelineBoxes);
  }
  out["end_s"] = timeline.end;
  Json idle = Json::array();
  for (double busy : timeline.busy) idle.push_back(std::max(0.0, timeline.end - busy));
  out["idle_s"] = std::move(idle);
  out["slowest_stage"] = step.slowest;
  out["pace_s"] = step.pace.forward + step.pace.Backward();
  out["bubble_s"] = step.bubble_s;
  out["bubble_formula"] = text.bubble;
  out["cost_pipeline_s"] = step.pipeline_s;  // this timeline's end: cost prices the step from it
  // The schedule's formula at the pace-setting stage's times (what equal stages give), for comparison.
  const double formula_bubble = step::BubbleSeconds(split, step.pace);
  out["formula_bubble_s"] = formula_bubble;
  out["formula_pipeline_s"] =
      static_cast<double>(step.microbatches) * (step.pace.forward + step.pace.Backward()) + formula_bubble;
  out["outside_s"] = step.exposed_parameter_s + step.exposed_gradient_s + step.update_s;
  out["step_time_s"] = step.step_time_s;
  return out;
}

}  // namespace easyplan::api
