#include "step/estimate.h"

#include <algorithm>
#include <utility>

#include "core/checked_math.h"

namespace easyplan::step {
namespace {

// Each stage's step options: its worst device's optimizer update (parameters, gradients and state, once
// per step; the accumulation of each microbatch's gradients), and the loss on the last stage only.
StatusOr<PipelineStep> PricePipelinedStep(const kernels::DryRunReport& run, const planner::Plan& plan,
                                          const kernels::ModelDesc& desc, const HardwareProfile& hardware,
                                          const StepOptions& whole, const planner::MemoryReport& memory,
                                          int64_t microbatches, bool keep_timeline) {
  if (whole.mode != Mode::kTrain) {
    // api refuses a pipelined serving step before it gets here (api::CheckPricedPipeline).
    return Status::Internal("EstimateStep: a pipelined serving step is not priced");
  }
  const planner::PipelineSplit& split = plan.pipeline;
  std::vector<StepOptions> per_stage(static_cast<size_t>(split.stages), whole);
  for (const planner::StageMemory& stage : memory.stages) {
    StepOptions& options = per_stage[static_cast<size_t>(stage.stage)];
    options.update_bytes = UpdateBytes(stage.worst, microbatches);
    if (stage.stage != split.stages - 1) options.loss_bytes = 0;
  }
  return PricePipeline(run, plan, desc, hardware, per_stage, microbatches, keep_timeline);
}

// The whole step of a pipeline in StepCost's terms: the slowest stage's figures over every microbatch,
// its collectives and layers, and the schedule's step time.
StatusOr<StepCost> PipelineStepCost(const PipelineStep& p) {
  const StageStep& slow = p.stages[static_cast<size_t>(p.slowest)];
  StepCost cost = slow.cost;
  const double m = static_cast<double>(p.microbatches);
  // The busiest device's passes (PricePipeline's pace): with the bubble and what runs outside the pipeline,
  // the headline's parts add up to the step time.
  const StepCost::Microbatch& mb = p.pace_microbatch;
  cost.compute_s = m * (mb.forward_s + mb.backward_s) + p.update_s;
  cost.recompute_s = slow.cost.recompute_s * m;
  cost.memory_bound_s = (slow.cost.memory_bound_s - slow.cost.update_s) * m + p.update_s;
  cost.update_s = p.update_s;
  const double sends = 2.0 * static_cast<double>(p.sends_per_microbatch) * p.send_s * m;
  cost.exposed_communication_s =
      m * (mb.forward_exposed_s + mb.backward_exposed_s) + sends + p.exposed_parameter_s + p.exposed_gradient_s;
  const std::optional<int64_t> step_flops = CheckedMul(slow.cost.step_flops, p.microbatches);
  if (!step_flops) {
    return Status::BadInput({},
                            "the step's FLOP count does not fit in 64 bits: expected fewer microbatches or a "
                            "smaller batch, sequence or model");
  }
  cost.step_flops = *step_flops;
  // The parameters stay gathered for the whole step (step/pipeline_step.h): their forward gather and
  // their gradients' reduce-scatter run once, the backward's and the recomputation's re-gathers not at all;
  // every activation collective runs once per microbatch.
  std::vector<PricedCollective> issued;
  cost.communication_s = sends;
  for (PricedCollective c : cost.collectives) {
    const bool parameter = c.overlapped && c.phase != "gradient";
    if (parameter && !(c.phase == "forward" || c.kind == kernels::CollectiveKind::kReduceScatter)) continue;
    if (!parameter && c.phase != "gradient") c.count *= p.microbatches;
    cost.communication_s += c.seconds * static_cast<double>(c.count);
    issued.push_back(std::move(c));
  }
  cost.collectives = std::move(issued);
  // The exposed part is summed in another order than the whole: keep rounding from exposing more than
  // there is (cost printed "-5.55e-11 us hidden behind compute").
  cost.exposed_communication_s = std::min(cost.exposed_communication_s, cost.communication_s);
  cost.step_time_s = p.step_time_s;
  return cost;
}

}  // namespace

kernels::ModelDesc MicrobatchModel(const StepModel& model, const StepSettings& s) {
  kernels::ModelDesc desc = model.desc;
  desc.batch = s.batch / std::max<int64_t>(1, s.microbatches);
  desc.seq = s.decode() ? 1 : s.seq;
  if (s.decode()) desc.axes.sequence.clear();
  return desc;
}

int64_t UpdateBytes(const planner::DeviceMemory& device, int64_t microbatches) {
  const int64_t accumulations = std::max<int64_t>(0, microbatches - 1);
  return 2 * device.params + device.grads * (1 + 2 * accumulations) + 2 * device.optimizer;
}

StatusOr<StepEstimate> EstimateStep(const kernels::DryRunReport& run, const planner::Plan& plan, const StepModel& model,
                                    const HardwareProfile& hardware, const StepSettings& s,
                                    planner::MemoryReport memory) {
  const bool train = s.mode == Mode::kTrain;
  StepEstimate estimate;
  estimate.memory = std::move(memory);
  const kernels::ModelDesc desc = MicrobatchModel(model, s);
  StepOptions step;
  step.mode = s.mode;
  step.remat = s.policy;
  step.microbatches = s.microbatches;
  step.flash_attention = model.flash_attention;
  step.fp8_matmuls = s.precision == Precision::kFp8;
  step.torus = s.torus;
  if (s.decode()) {
    step.decode_cache_tokens = s.seq;
    step.kv_cache_bytes = estimate.memory.Worst().kv_cache;
  }
  if (train) {
    // The optimizer update (UpdateBytes). The loss reads the float32 logits in the forward, and reads them
    // and writes their gradient in the backward.
    step.update_bytes = UpdateBytes(estimate.memory.Worst(), s.microbatches);
    step.loss_bytes = 3 * estimate.memory.breakdown.logits;
  }
  if (plan.pipeline.pipelined()) {
    EP_ASSIGN_OR_RETURN(estimate.pipeline, PricePipelinedStep(run, plan, desc, hardware, step, estimate.memory,
                                                              s.microbatches, s.keep_timeline));
    EP_ASSIGN_OR_RETURN(estimate.step, PipelineStepCost(*estimate.pipeline));
  } else {
    EP_ASSIGN_OR_RETURN(estimate.step, PriceStep(run, plan.mesh, desc, hardware, step));
  }

  const int64_t devices = plan.mesh.NumDevices();
  estimate.tokens = s.decode() ? s.batch : s.batch * s.seq;
  estimate.active_params = model.active_params;
  estimate.model_flops =
      (train ? 6.0 : 2.0) * static_cast<double>(model.active_params) * static_cast<double>(estimate.tokens);
  const double t = estimate.step.step_time_s;
  if (t > 0) {
    estimate.tokens_per_s = static_cast<double>(estimate.tokens) / t;
    estimate.tokens_per_s_per_device = estimate.tokens_per_s / static_cast<double>(devices);
    // Against the peak of the precision the projections run in: fp8 MFU is a share of what fp8 could do.
    estimate.mfu_peak = s.precision;
    const double peak = s.precision == Precision::kFp8 ? hardware.peak_flops_fp8.value_or(hardware.peak_flops_bf16)
                                                       : hardware.peak_flops_bf16;
    estimate.mfu = estimate.model_flops / (t * static_cast<double>(devices) * peak);
  }
  estimate.fits = estimate.memory.fits;
  return estimate;
}

}  // namespace easyplan::step
