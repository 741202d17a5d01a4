#include "api/cost_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "api/assumptions.h"
#include "api/text_table.h"
#include "core/human.h"

namespace easyplan::api {

std::string HumanSeconds(double seconds) {
  if (FiniteFigure(seconds, "a time") == 0) return "0 s";
  const double magnitude = std::fabs(seconds);
  if (magnitude >= 1) return fmt::format("{:.3g} s", seconds);
  if (magnitude >= 1e-3) return fmt::format("{:.3g} ms", seconds * 1e3);
  if (magnitude >= 1e-6) return fmt::format("{:.3g} us", seconds * 1e6);
  if (magnitude >= 1e-9) return fmt::format("{:.3g} ns", seconds * 1e9);
  // Below a nanosecond no kernel, launch or link is timed: the figure is a rounding residue of a sum
  // (a 0.65 ps embedding lookup, 6.94e-12 s of communication "hidden"), printed at the resolution as 0
  // (the JSON keeps the value).
  return "0 s";
}

std::string HumanRate(double per_second) {
  // Whole units with thousands separators while they are exact in int64; past 10^15 (no profile within
  // its ranges gets there for a model easyplan resolves) in scientific notation, never a cast out of range.
  const double rate = FiniteFigure(per_second, "a rate");
  if (std::fabs(rate) < 1e15) return WithThousands(static_cast<int64_t>(std::llround(rate)));
  return fmt::format("{:.3e}", rate);
}

std::string HumanPercent(double fraction) { return fmt::format("{:.1f}%", FiniteFigure(fraction, "an MFU") * 100); }

namespace {

// A pipelined step: the schedule and its bubble, the sends, and each stage's microbatch (docs/PIPELINE.md).
std::string StepPipelineText(const step::PipelineStep& p, const planner::PipelineSplit& split) {
  std::string out = fmt::format(
      "\npipeline: {} stages, {} schedule{}, {} microbatches; bubble {} ({} of the step; the schedule simulated, "
      "docs/PIPELINE.md), bubble-free step {}\n",
      split.stages, planner::PipelineScheduleName(split.schedule),
      split.virtual_stages > 1 ? fmt::format(" x {} virtual stages", split.virtual_stages) : std::string(),
      p.microbatches, HumanSeconds(p.bubble_s), HumanPercent(p.bubble_fraction), HumanSeconds(p.bubble_free_s));
  out += fmt::format(
      "sends between stages: {} per device each way, {} per microbatch per stage, over the {} link: "
      "{} each\n",
      HumanBytesBinary(p.send_bytes), p.sends_per_microbatch, p.send_link, HumanSeconds(p.send_s));
  std::vector<std::vector<std::string>> rows = {{"stage", "layers", "forward", "backward", "microbatch", ""}};
  for (const step::StageStep& s : p.stages) {
    rows.push_back({std::to_string(s.stage), std::to_string(s.layers), HumanSeconds(s.cost.microbatch.forward_s),
                    HumanSeconds(s.cost.microbatch.backward_s), HumanSeconds(s.microbatch_s),
                    s.stage == p.slowest ? "sets the pace" : ""});
  }
  return out + Columns(rows, {1, 2, 3, 4}, "  ");
}

}  // namespace

std::string CostText(const api::CostResult& r, bool mode_given, bool verbose) {
  const api::StepEstimate& e = *r.estimate;
  const step::StepCost& c = e.step;
  const api::StepSettings& s = r.settings;
  const bool train = s.mode == Mode::kTrain;
  const Mesh& mesh = r.plan.mesh;
  std::string out = fmt::format("{} step of {} (EasyDeL {}) on mesh {} ({} devices{}), {}\n",
                                train ? "training" : (s.decode() ? "decode" : "prefill"), r.inputs.model->model_type(),
                                r.inputs.model->easydel_version().name, mesh.ToString(), mesh.NumDevices(),
                                mesh.dcn_shape.empty() ? "" : ", multi-slice", r.hardware->description);
  out += fmt::format("batch {} x seq {}", s.batch, s.seq);
  if (s.precision == step::Precision::kFp8) out += ", fp8 projections";
  if (train) {
    out += fmt::format(", {} microbatch{}, gradient_checkpointing {}", s.microbatches, s.microbatches == 1 ? "" : "es",
                       planner::CheckpointPolicyName(s.policy));
  }
  if (!mode_given) out += " (--mode train, the default; --mode prefill or decode for serving)";
  out += "\n\n";
  const planner::DeviceMemory& worst = e.memory.Worst();
  const int64_t headroom = e.memory.budget_per_device - worst.total;
  std::vector<std::vector<std::string>> totals = {
      {"step time", HumanSeconds(c.step_time_s),
       fmt::format("compute {} + exposed communication {}{}", HumanSeconds(c.compute_s),
                   HumanSeconds(c.exposed_communication_s),
                   e.pipeline ? " + pipeline bubble " + HumanSeconds(e.pipeline->bubble_s) : "")},
      {"compute", HumanSeconds(c.compute_s),
       fmt::format("{} recomputed, {} memory-bound ops; busiest device, roofline per matmul",
                   HumanSeconds(c.recompute_s), HumanSeconds(c.memory_bound_s))},
      {"communication", HumanSeconds(c.communication_s),
       fmt::format("{} hidden behind compute", HumanSeconds(c.communication_s - c.exposed_communication_s))},
      {"tokens/s", HumanRate(e.tokens_per_s), fmt::format("{} per device", HumanRate(e.tokens_per_s_per_device))},
      {"MFU", HumanPercent(e.mfu),
       fmt::format("{}·N·tokens against the {} peak, N = {} active parameters", train ? 6 : 2,
                   step::PrecisionName(e.mfu_peak), WithThousands(e.active_params))},
      {"memory", HumanBytesBinary(worst.total),
       fmt::format("worst device {} of {}: {}", worst.id, r.budget_label,
                   e.fits ? fmt::format("fits ({} headroom)", HumanBytesBinary(headroom))
                          : fmt::format("does not fit (over by {})", HumanBytesBinary(-headroom)))},
  };
  // Serving latency: a prefill step is the batch's time to first token, a decode step the time per output
  // token at the cache length.
  if (s.mode == Mode::kDecode) {
    totals.insert(totals.begin() + 1,
                  {"TPOT", HumanSeconds(c.step_time_s),
                   fmt::format("time per output token, each sequence's next against {} cached", s.seq)});
  } else if (!train) {
    totals.insert(totals.begin() + 1,
                  {"TTFT", HumanSeconds(c.step_time_s), "time to first token: the batch's prompts prefilled"});
  }
  out += Columns(totals, {1});
  if (e.pipeline) out += StepPipelineText(*e.pipeline, r.plan.pipeline);

  out += "\ncommunication per device (one microbatch):\n";
  std::vector<std::vector<std::string>> kinds = {{"", "all-gather", "reduce-scatter", "all-reduce", "all-to-all"}};
  auto kind_row = [](const char* name, const step::KindBytes& k) {
    return std::vector<std::string>{name, HumanBytesBinary(k.all_gather), HumanBytesBinary(k.reduce_scatter),
                                    HumanBytesBinary(k.all_reduce), HumanBytesBinary(k.all_to_all)};
  };
  kinds.push_back(kind_row("forward", c.forward));
  if (train) kinds.push_back(kind_row("backward", c.backward));
  out += Columns(kinds, {1, 2, 3, 4}, "  ");

  if (!c.collectives.empty()) {
    std::vector<const step::PricedCollective*> order;
    for (const step::PricedCollective& p : c.collectives) order.push_back(&p);
    std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
      return a->seconds * static_cast<double>(a->count) > b->seconds * static_cast<double>(b->count);
    });
    const size_t shown = std::min<size_t>(order.size(), 8);
    out += fmt::format("\ncostliest collectives ({} of {}; per step = each x count):\n", shown, order.size());
    std::vector<std::vector<std::string>> rows = {
        {"phase", "scope", "op", "kind", "axes", "link", "bytes", "count", "per step", ""}};
    for (size_t i = 0; i < shown; ++i) {
      const step::PricedCollective& p = *order[i];
      rows.push_back({p.phase, p.scope, p.op, std::string(kernels::CollectiveName(p.kind)), p.axes, p.link,
                      HumanBytesBinary(p.bytes_per_device), std::to_string(p.count),
                      HumanSeconds(p.seconds * static_cast<double>(p.count)), p.overlapped ? "overlapped" : "exposed"});
    }
    out += Columns(rows, {6, 7, 8}, "  ");
  }
  out += "\nforward per layer (one occurrence):\n";
  std::vector<std::vector<std::string>> layers = {{"scope", "count", "compute", "communication"}};
  for (const step::LayerCost& l : c.layers) {
    layers.push_back({l.scope, std::to_string(l.count), HumanSeconds(l.compute_s), HumanSeconds(l.communication_s)});
  }
  out += Columns(layers, {1, 2, 3}, "  ");
  std::vector<std::string> assumed =
      api::StepAssumptions(*r.inputs.model, {.train = train, .priced = true, .tree = &r.inputs.tree_spec});
  if (c.attention_causal_share < 1) {
    assumed.push_back(fmt::format(
        "a fused attention kernel that skips the blocks above the causal diagonal: q.k and p.v run {:.0f}% of the "
        "full product on the busiest device (sliding windows skip no more)",
        100 * c.attention_causal_share));
  }
  assumed.push_back(verbose ? r.matmul_assumption : r.matmul_assumption_brief);
  if (!assumed.empty() || !e.topology.empty()) out += "\n";
  for (const std::string& line : assumed) out += "assumed " + line + "\n";
  for (const std::string& line : e.topology) out += "assumed " + line + "\n";
  return out;
}

}  // namespace easyplan::api
