#ifndef EASYPLAN_API_PIPELINE_TIMELINE_H_
#define EASYPLAN_API_PIPELINE_TIMELINE_H_

// The report's pipeline timeline (docs/REPORT.md, docs/PIPELINE.md "The timeline"): a pipelined step as
// `cost` prices it (step/pipeline_step.h) run through its schedule's order
// (step/pipeline_schedule.h), one box per pass, with cost's own figures beside it to compare.

#include <cstdint>
#include <vector>

#include "core/json.h"
#include "core/limits.h"
#include "core/status.h"
#include "planner/pipeline.h"
#include "step/pipeline_step.h"

namespace easyplan::api {

/// Past this many passes (m x chunks x 2, or 3 with a split backward) the page gives the timeline's figures
/// without its boxes: a 32,768-box drawing is already more than a reader can see.
inline constexpr int64_t kMaxTimelineBoxes = 65'536;

/// The page's "pipeline" member: the schedule and where its order comes from, each stage's times, the
/// boxes [device, kind ("F", "B", "I", "W"), microbatch, chunk, start_s, end_s, overlapped (0 or 1)] (null
/// past kMaxTimelineBoxes), the timeline's end and each device's idle time, and cost's figures: the pace,
/// the bubble (this timeline's, step::PricePipeline) and the formula it equals for equal stages,
/// "cost_pipeline_s" (m x pace + bubble: the timeline's end) and what the step adds outside the pipeline
/// (the exposed parameter gathers and gradient sync, the update).
/// The caller bounds it first with CheckTimelineSize (`report` does, before it prices the step).
StatusOr<Json> PipelineTimelineJson(const step::PipelineStep& step, const planner::PipelineSplit& split);

/// Whether the timeline of `split` at `microbatches` stays within limits.max_timeline_passes
/// (step::SchedulePasses, estimated without building it): bad input naming the passes, the schedule and
/// --max-timeline-passes otherwise. Checked before a pipelined step is priced, which simulates it.
Status CheckTimelineSize(const planner::PipelineSplit& split, int64_t microbatches, const Limits& limits);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_PIPELINE_TIMELINE_H_
