#include "step/pipeline_step.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace easyplan::step {
namespace {

// Whether a send from stage `from` to stage `to` crosses the network: the two stages sit in different
// slices (the pp axis crosses slices, --dcn), or the first device of `from` and its counterpart on `to` sit
// in different fast domains of their slice (devices [k x chips, (k+1) x chips) share one, row-major over
// each axis's in-slice size, as jax create_hybrid_device_mesh lays a slice out).
bool SendCrossesNetwork(const Mesh& mesh, int pp, int64_t from, int64_t to, const step::HardwareProfile& hw) {
  const size_t axis = static_cast<size_t>(pp);
  const int64_t dcn = mesh.dcn_shape.empty() ? 1 : mesh.dcn_shape[axis];
  const int64_t ici = mesh.shape[axis] / dcn;
  // Global coordinate = slice index x ici + in-slice index (DCN major).
  if (from / ici != to / ici) return true;
  const int64_t stride = mesh.SliceStrides()[axis];
  const int64_t a = (from % ici) * stride, b = (to % ici) * stride;
  return hw.fast.chips > 0 && a / hw.fast.chips != b / hw.fast.chips;
}

// One point-to-point send of `bytes` per device over a link: its latency and the bytes at its bandwidth.
double SendSeconds(const step::HardwareProfile& hw, bool network, int64_t bytes) {
  const step::LinkDomain& link = network ? hw.network : hw.fast;
  const double bandwidth =
      link.bandwidth * (network ? hw.network_efficiency.value_or(hw.link_efficiency) : hw.link_efficiency);
  return link.base_latency + link.latency + (bandwidth > 0 ? static_cast<double>(bytes) / bandwidth : 0);
}

}  // namespace

StatusOr<PipelineStep> PricePipeline(const kernels::DryRunReport& run, const planner::Plan& plan,
                                     const kernels::ModelDesc& model, const step::HardwareProfile& hw,
                                     const std::vector<StepOptions>& per_stage, int64_t microbatches,
                                     bool keep_timeline) {
  const planner::PipelineSplit& split = plan.pipeline;
  const std::optional<int> pp = plan.mesh.AxisIndex(std::string(planner::kPipelineAxis));
  if (!split.pipelined() || !pp || static_cast<int64_t>(per_stage.size()) != split.stages) {
    return Status::Internal("PricePipeline: the plan's pipeline, its pp axis and the stage options disagree");
  }
  PipelineStep out;
  out.microbatches = std::max<int64_t>(1, microbatches);

  // The sends the dry run recorded (kernels/step_records.h): each stage passes one microbatch's hidden
  // state on, and receives its gradient back, once per model chunk it hands on. The busiest stage's count
  // and the slowest boundary price every stage's (the pace is the slowest stage's).
  std::vector<int64_t> sent(static_cast<size_t>(split.stages), 0);
  bool network = false;
  for (const kernels::CommRecord& r : run.comm.records) {
    if (r.kind != kernels::CollectiveKind::kSendRecv) continue;
    if (r.stage < 0 || r.stage >= split.stages || r.to_stage < 0 || r.to_stage >= split.stages) {
      return Status::Internal("PricePipeline: a stage send's stages are outside the pipeline");
    }
    ++sent[static_cast<size_t>(r.stage)];
    out.send_bytes = std::max(out.send_bytes, r.bytes_per_device);
    network = network || SendCrossesNetwork(plan.mesh, *pp, r.stage, r.to_stage, hw);
  }
  out.sends_per_microbatch = *std::max_element(sent.begin(), sent.end());
  if (out.sends_per_microbatch == 0) {
    return Status::Internal("PricePipeline: the dry run records no stage sends (kernels::AppendStepRecords)");
  }
  out.send_link = network ? "network" : "fast";
  out.send_s = SendSeconds(hw, network, out.send_bytes);

  // Stages that run the same scopes with the same weights and the same step options cost the same (the
  // middle stages of an even split): each distinct one is priced once. DualPipe's stages also hold their
  // mirror's tensors, so each is priced on its own.
  std::map<std::tuple<std::map<std::string, int64_t>, int64_t, int64_t>, StepCost> priced;
  for (int64_t s = 0; s < split.stages; ++s) {
    StageStep stage;
    stage.stage = s;
    stage.layers = split.LayerCount(s);
    StepOptions options = per_stage[static_cast<size_t>(s)];
    options.microbatches = 1;
    const kernels::DryRunReport view = StageView(run, split, s);
    const bool shareable = split.schedule != planner::PipelineSchedule::kDualPipe && s > 0 && s + 1 < split.stages;
    const auto key = std::make_tuple(view.stage_weights, options.update_bytes, options.loss_bytes);
    if (auto it = priced.find(key); shareable && it != priced.end()) {
      stage.cost = it->second;
    } else {
      EP_ASSIGN_OR_RETURN(stage.cost, PriceStep(view, plan.mesh, model, hw, options));
      if (shareable) priced.emplace(key, stage.cost);
    }
    const StepCost::Microbatch& mb = stage.cost.microbatch;
    const double sends = 2.0 * static_cast<double>(out.sends_per_microbatch) * out.send_s;
    stage.microbatch_s = mb.forward_s + mb.backward_s + mb.forward_exposed_s + mb.backward_exposed_s + sends;
    out.stages.push_back(std::move(stage));
  }
  out.slowest = std::max_element(out.stages.begin(), out.stages.end(), [](const StageStep& a, const StageStep& b) {
                  return a.microbatch_s < b.microbatch_s;
                })->stage;
  const StageStep& slow = out.stages[static_cast<size_t>(out.slowest)];
  const StepCost::Microbatch& mb = slow.cost.microbatch;
  const std::vector<StageTimes> times = PipelineStageTimes(out);
  out.pace = times[static_cast<size_t>(out.slowest)];
  // The schedule's own order run with every stage's times: its end is the pipeline's time, and the busiest
  // device's idle time in it the bubble.
  EP_ASSIGN_OR_RETURN(out.timeline, SimulateSchedule(split, out.microbatches, times, keep_timeline));
  const Timeline& timeline = out.timeline;
  const auto busiest =
      static_cast<int64_t>(std::max_element(timeline.busy.begin(), timeline.busy.end()) - timeline.busy.begin());
  out.pace_microbatch = mb;
  if (split.schedule == planner::PipelineSchedule::kDualPipe) {
    // Device d holds stages d and p - 1 - d, each for half the microbatches.
    const StepCost::Microbatch& a = out.stages[static_cast<size_t>(busiest)].cost.microbatch;
    const StepCost::Microbatch& b = out.stages[static_cast<size_t>(split.stages - 1 - busiest)].cost.microbatch;
    out.pace_microbatch = StepCost::Microbatch::Mean(a, b);
  }
  out.pipeline_s = timeline.end;
  out.bubble_s = std::max(0.0, timeline.end - timeline.busy[static_cast<size_t>(busiest)]);

  // Overlappable collectives. A pipelining runtime keeps a stage's gathered parameters for the whole step
  // (torchtitan's FSDP default, reshard_after_forward = not pp_enabled, "to avoid per-microbatch
  // all-gathers"; Megatron-LM's distributed optimizer gathers after the update): one gather behind the
  // first forward, one reduce-scatter of the accumulated gradients behind the last backward. A stage's
  // gradient sync over the data axes also runs behind its last backward; the update after both.
  out.exposed_parameter_s =
      std::max(0.0, mb.parameter_gather_s - mb.forward_s) + std::max(0.0, mb.parameter_reduce_s - mb.backward_s);
  for (const StageStep& stage : out.stages) {
    const double hidden = std::max(0.0, stage.cost.gradient_sync_s - stage.cost.microbatch.backward_s);
    if (hidden + stage.cost.update_s > out.exposed_gradient_s + out.update_s) {
      out.exposed_gradient_s = hidden;
      out.update_s = stage.cost.update_s;
    }
  }
  const double outside = out.exposed_parameter_s + out.exposed_gradient_s + out.update_s;
  out.bubble_free_s = out.pipeline_s - out.bubble_s + outside;
  out.step_time_s = out.pipeline_s + outside;
  out.bubble_fraction = out.step_time_s > 0 ? out.bubble_s / out.step_time_s : 0;
  return out;
}

std::vector<StageTimes> PipelineStageTimes(const PipelineStep& step) {
  const double send = static_cast<double>(step.sends_per_microbatch) * step.send_s;
  std::vector<StageTimes> out;
  for (const StageStep& stage : step.stages) {
    const StepCost::Microbatch& mb = stage.cost.microbatch;
    StageTimes t;
    t.forward = mb.forward_s + mb.forward_exposed_s + send;
    t.backward_weight = mb.weight_gradient_s;
    t.backward_input = mb.backward_s - mb.weight_gradient_s + mb.backward_exposed_s + send;
    out.push_back(t);
  }
  return out;
}

double LeastBubbleFraction(const planner::PipelineSplit& split, int64_t microbatches) {
  const StageTimes least{.forward = 1, .backward_input = 0, .backward_weight = 2};
  const double m = static_cast<double>(std::max<int64_t>(1, microbatches));
  return BubbleSeconds(split, least) / (m * (least.forward + least.Backward()));
}

}  // namespace easyplan::step
