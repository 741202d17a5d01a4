// `easyplan check`'s terminal form: the layout check, the numeric check's comparisons, the communication
// per scope, the memory comparison and the verdict (docs/CHECK.md describes it). The JSON form is
// CheckToJson (api/check.h).
#include "api/check_text.h"

#include <fmt/format.h>

#include "core/human.h"

namespace easyplan::api {
namespace {

// Every figure the text prints passes the non-finite guard (core/human.h), as the JSON's pass EmitJson's:
// a NaN comparison is an internal error naming it, never "nan" in a report that then says FAIL or pass.
std::string Sci(double v, const std::string& what) {
  return FiniteFigure(v, what) == 0 ? "0" : fmt::format("{:.1e}", v);
}
std::string Ratio(double v, const std::string& what) { return fmt::format("{:.2f}x", FiniteFigure(v, what)); }
std::string IndexText(const kernels::Dims& index) { return fmt::format("[{}]", fmt::join(index, ", ")); }

// The pipeline the numeric check ran and each stage boundary's send/recv (docs/PIPELINE.md).
std::string CheckPipelineText(const planner::PipelineSplit& split, const kernels::CommLog& comm) {
  std::vector<const kernels::CommRecord*> sends;
  int64_t total = 0;
  for (const kernels::CommRecord& r : comm.records) {
    if (r.kind != kernels::CollectiveKind::kSendRecv) continue;
    sends.push_back(&r);
    total += r.bytes_per_device;
  }
  std::string out = fmt::format(
      "  pipeline: {} stages{}, {} schedule, the tiny model's layers per chunk {}; forward only; {} stage boundar{}, "
      "send/recv {} bytes "
      "per device in all:\n",
      split.stages, split.virtual_stages > 1 ? fmt::format(" x {} chunks", split.virtual_stages) : "",
      planner::PipelineScheduleName(split.schedule), fmt::join(split.chunk_layers, ","), sends.size(),
      sends.size() == 1 ? "y" : "ies", total);
  for (const kernels::CommRecord* r : sends) {
    out += fmt::format("    before {}: stage {} -> {}, {} bytes per device ({})\n", r->scope, r->stage, r->to_stage,
                       r->bytes_per_device, r->tensor_spec);
  }
  return out;
}

}  // namespace

std::string CheckText(const CheckRun& run) {
  std::string out;
  out += fmt::format("mesh {} ({} devices)\n", run.mesh.ToString(), run.mesh.NumDevices());
  if (run.layout) {
    const kernels::LayoutCheckResult& l = *run.layout;
    out += fmt::format("layout: {} ({} tensors in {} layout groups on {} devices)\n", l.ok() ? "pass" : "FAIL",
                       l.tensors, l.groups, l.devices);
    for (const kernels::LayoutError& e : l.errors) out += fmt::format("  error: {}: {}\n", e.param, e.message);
    if (l.errors_total > static_cast<int64_t>(l.errors.size())) {
      out += fmt::format("  ... and {} more errors\n", l.errors_total - static_cast<int64_t>(l.errors.size()));
    }
  }
  if (!run.numeric_skipped.empty()) out += "numeric: skipped: " + run.numeric_skipped + "\n";
  if (run.numeric) {
    const kernels::NumericReport& n = *run.numeric;
    const NumericSetup& s = *run.numeric_setup;
    out += fmt::format("numeric: {} (tiny {}; batch {} x seq {}, seed {}, {} parameters)\n", n.ok() ? "pass" : "FAIL",
                       DescribeModel(s.model), n.batch, n.seq, run.seed, n.params);
    for (const std::string& d : s.differences) out += "  note: the tiny plan differs: " + d + "\n";
    for (const kernels::ShardError& e : n.shard_errors) out += fmt::format("  error: {}: {}\n", e.param, e.message);
    if (n.shard_errors_total > static_cast<int64_t>(n.shard_errors.size())) {
      out += fmt::format("  ... and {} more shard errors\n",
                         n.shard_errors_total - static_cast<int64_t>(n.shard_errors.size()));
    }
    if (!n.executed) out += "  the forward pass did not run: shard shapes are wrong\n";
    if (!n.comparisons.empty()) {
      out += fmt::format("  {:<10} {:>9} {:>9} {:>9} {:>9}  {}\n", "output", "nmse", "max|err|", "tol nmse", "tol err",
                         "result");
      for (const kernels::Comparison& c : n.comparisons) {
        std::string result = c.ok ? "ok" : "FAIL";
        if (!c.ok && c.device >= 0) result += fmt::format(" (device {} at {})", c.device, IndexText(c.index));
        out += fmt::format("  {:<10} {:>9} {:>9} {:>9} {:>9}  {}\n", c.name,
                           Sci(c.nmse, "the check's " + c.name + " nmse"),
                           Sci(c.max_abs, "the check's " + c.name + " max|err|"),
                           Sci(c.max_nmse, "the check's " + c.name + " nmse tolerance"),
                           Sci(c.max_abs_tol, "the check's " + c.name + " max|err| tolerance"), result);
      }
    }
    if (n.engine) {
      const kernels::EngineComparison& e = *n.engine;
      out += fmt::format(
          "  engine: {}, {} process{} x {} device{}; against the in-process engine: outputs nmse {} "
          "(tol {}), max|diff| {} (tol {}); collectives {}: {}\n",
          e.engine, e.processes, e.processes == 1 ? "" : "es", e.devices_per_process,
          e.devices_per_process == 1 ? "" : "s", Sci(e.max_nmse, "the engines' outputs nmse"),
          Sci(e.nmse_tol, "the engines' nmse tolerance"), Sci(e.max_abs_diff, "the engines' max|diff|"),
          Sci(e.abs_tol, "the engines' max|diff| tolerance"),
          e.comm_difference.empty() ? fmt::format("{} identical", e.records) : e.comm_difference,
          e.ok() ? "ok" : "FAIL");
    }
    if (n.comm.dropped_all_reduces > 0) {
      out += fmt::format("  injected: {} all-reduce skipped\n", n.comm.dropped_all_reduces);
    }
    if (n.comm.dropped_sends > 0) out += fmt::format("  injected: {} stage send dropped\n", n.comm.dropped_sends);
    if (n.executed) {
      out += fmt::format("  communication per device (bytes, {}-byte elements):\n", s.model.bytes_per_element);
      out += fmt::format("  {:<10} {:>12} {:>15} {:>12} {:>12}\n", "scope", "all-gather", "reduce-scatter",
                         "all-reduce", "all-to-all");
      std::vector<std::string> scopes = n.comm.Scopes();
      scopes.push_back("");
      for (const std::string& scope : scopes) {
        out += fmt::format("  {:<10} {:>12} {:>15} {:>12} {:>12}\n", scope.empty() ? "total" : scope,
                           n.comm.Bytes(kernels::CollectiveKind::kAllGather, scope),
                           n.comm.Bytes(kernels::CollectiveKind::kReduceScatter, scope),
                           n.comm.Bytes(kernels::CollectiveKind::kAllReduce, scope),
                           n.comm.Bytes(kernels::CollectiveKind::kAllToAll, scope));
      }
      if (s.plan.pipeline.pipelined()) out += CheckPipelineText(s.plan.pipeline, n.comm);
      // Routed collectives move what the routing sends: this run's figure beside cost's expectation.
      const int64_t routed = n.comm.Bytes(kernels::CollectiveKind::kAllToAll);
      const int64_t expected = n.comm.ExpectedBytes(kernels::CollectiveKind::kAllToAll);
      if (routed != expected) {
        out += fmt::format(
            "  routed: the MoE ragged all-to-alls moved {} bytes on the busiest device under this routing; cost "
            "prices {} (assumed balanced routing)\n",
            routed, expected);
      }
    }
  }
  if (run.memory) {
    if (run.memory_compared == 0) {
      out += "memory: not compared (the forward did not run)\n";
    } else if (run.memory->empty()) {
      out += fmt::format(
          "memory: measured = predicted on every device ({} figures: parameters, residual stream, float32 logits "
          "and KV cache, to the byte; forward only)\n",
          run.memory_compared);
    } else {
      out += fmt::format("memory: {} of {} figures differ from `easyplan memory`\n", run.memory->size(),
                         run.memory_compared);
      for (const CheckRun::MemoryRow& r : *run.memory) {
        out += fmt::format("  error: device {}: {}: measured {} bytes, predicted {}\n", r.device, r.what, r.measured,
                           r.predicted);
      }
    }
  }
  if (run.activation_peak && !run.activation_peak->measured.empty()) {
    const CheckRun::ActivationPeak& p = *run.activation_peak;
    const size_t w = static_cast<size_t>(p.worst_device);
    out += fmt::format(
        "activations: peak live through the last layer {} bytes measured on device {}, {} predicted ({}; "
        "devices {} to {})",
        p.measured[w], p.worst_device, p.predicted[w],
        Ratio(p.predicted[w] > 0 ? static_cast<double>(p.measured[w]) / static_cast<double>(p.predicted[w]) : 0.0,
              "the activation peak's ratio"),
        Ratio(p.min_ratio, "the smallest activation peak ratio"),
        Ratio(p.max_ratio, "the largest activation peak ratio"));
    out += fmt::format("; tolerance {:.1f}x to {:.1f}x: {}\n", kPeakBandLow, kPeakBandHigh, p.ok ? "ok" : "FAIL");
  }
  out += fmt::format("check: {} (EasyDeL {})\n", run.ok() ? "pass" : "FAIL", run.easydel_version);
  return out;
}

}  // namespace easyplan::api
