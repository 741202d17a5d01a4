// `easyplan suggest`'s terminal form: the search, the ranked candidates, why the winner wins, the Pareto
// front, what was rejected and the commands that reproduce each candidate (docs/COST.md). The JSON form
// is SuggestToJson (api/suggest.h).
#include "api/suggest_text.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/cost_text.h"
#include "api/text_table.h"
#include "core/checked_math.h"
#include "core/human.h"

namespace easyplan::api {
namespace {

std::string TermText(const TermDifference& t, double value) {
  // Bytes are int64 counts carried as double: 2^63 (INT64_MAX rounded up) is the one value past the range.
  return t.unit == "bytes" ? HumanBytesBinary(CheckedFromDouble(value).value_or(INT64_MAX)) : HumanSeconds(value);
}

}  // namespace

std::string SuggestText(const SuggestOptions& o, const SuggestResult& r, bool verbose) {
  const step::HardwareProfile& hardware = *r.hardware;
  const bool train = o.memory.mode == "train";
  std::string out = fmt::format("{} of {} (EasyDeL {}) on {} x {} ({}{}), {}batch {} x seq {}\n",
                                train ? "training" : (o.memory.mode == "decode" ? "decode" : "prefill"), r.model_type,
                                r.easydel_version, SuggestDevices(o), hardware.name, hardware.description,
                                o.slices > 1 ? fmt::format(", {} slices", o.slices) : "", train ? "global " : "",
                                *o.memory.batch, *o.memory.seq);
  if (PrecisionOf(o.pricing) == step::Precision::kFp8) out.insert(out.size() - 1, ", fp8 projections");
  int64_t rejected = 0;
  for (const auto& [reason, count] : r.rejected) rejected += count;
  out += fmt::format("considered {} configurations: {} feasible, {} rejected\n\n", WithThousands(r.considered),
                     WithThousands(static_cast<int64_t>(r.ranked.size())), WithThousands(rejected));
  if (r.ranked.empty()) {
    out += "nothing fits; rejected:\n";
  } else {
    const size_t shown = std::min(r.ranked.size(), static_cast<size_t>(o.top));
    // A decode step is a time per output token, and what ranks decode is tokens/s per device.
    const bool decode = o.memory.mode == "decode";
    // A search that tries pipelines (--max-pp) shows each row's schedule and virtual stages (V) beside its
    // microbatches: candidates that differ only there would otherwise read the same.
    const bool pipelines = train && o.max_pp > 1;
    std::vector<std::string> header = {"#", "mesh", "dcn", "gradient_checkpointing"};
    if (pipelines) header.insert(header.end(), {"schedule", "V"});
    header.insert(header.end(), {"micro", "memory", "headroom", decode ? "TPOT" : "step time",
                                 decode ? "tokens/s/device" : "tokens/s", "MFU", "exposed comm"});
    std::vector<std::vector<std::string>> rows = {header};
    for (size_t i = 0; i < shown; ++i) {
      const Candidate& c = r.ranked[i];
      const StepEstimate& e = c.estimate;
      const planner::DeviceMemory& worst = e.memory.Worst();
      const std::string policy = PolicyFlagValue(c.policy);
      std::vector<std::string> row = {std::to_string(i + 1), c.MeshFlag(), c.DcnFlag().empty() ? "-" : c.DcnFlag(),
                                      train ? (policy.empty() ? "none" : policy) : "-"};
      if (pipelines) {
        const bool pipelined = c.Stages() > 1;
        row.insert(row.end(), {pipelined ? c.pp_schedule : "-", pipelined ? std::to_string(c.virtual_stages) : "-"});
      }
      row.insert(row.end(),
                 {std::to_string(c.microbatches), HumanBytesBinary(worst.total),
                  HumanBytesBinary(e.memory.budget_per_device - worst.total), HumanSeconds(e.step.step_time_s),
                  decode ? HumanRate(e.tokens_per_s_per_device) : HumanRate(e.tokens_per_s), HumanPercent(e.mfu),
                  HumanSeconds(e.step.exposed_communication_s)});
      rows.push_back(std::move(row));
    }
    // Right-aligned: the numbers, from V on (without pipelines, from micro on).
    std::vector<size_t> right;
    for (size_t k = pipelines ? 5 : 4; k < header.size(); ++k) right.push_back(k);
    out += Columns(rows, right);
    if (r.ranked.size() >= 2) {
      const double gap = r.ranked[1].estimate.step.step_time_s - r.ranked[0].estimate.step.step_time_s;
      out += gap < 1e-9 ? std::string("\n#1 ties #2 on step time and needs less memory:\n")
                        : fmt::format("\n#1 beats #2 by {} per step:\n", HumanSeconds(gap));
      std::vector<std::vector<std::string>> terms = {{"", "#1", "#2"}};
      for (const TermDifference& t : r.winner_vs_runner_up) {
        terms.push_back({t.term, TermText(t, t.winner), TermText(t, t.runner_up)});
      }
      out += Columns(terms, {1, 2}, "  ");
    }
    std::vector<std::string> front;
    for (size_t i : r.pareto) {
      const Candidate& c = r.ranked[i];
      front.push_back(fmt::format("#{} ({}, {})", i + 1, HumanSeconds(c.estimate.step.step_time_s),
                                  HumanBytesBinary(c.estimate.memory.Worst().total)));
    }
    out += fmt::format("\nPareto front, memory against step time: {}\n", fmt::join(front, ", "));
    out += "\nrejected:\n";
  }
  // Most rejections first (a map keeps the names in order, so equal counts stay alphabetical).
  std::vector<std::pair<std::string, int64_t>> by_count(r.rejected.begin(), r.rejected.end());
  std::stable_sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::vector<std::string>> reasons;
  for (const auto& [reason, count] : by_count) reasons.push_back({WithThousands(count), reason});
  out += reasons.empty() ? "  none\n" : Columns(reasons, {0}, "  ");
  // What every candidate was priced under, as cost says it (the winner can change with attn_mechanism).
  if (!r.assumptions.empty()) out += "\n";
  // The matmul line is the JSON's detailed one; a terminal gets the one-line form unless --verbose.
  for (size_t i = 0; i < r.assumptions.size(); ++i) {
    const bool shorten = !verbose && i == r.matmul_assumption;
    out += "assumed " + (shorten ? r.matmul_assumption_brief : r.assumptions[i]) + "\n";
  }
  if (!r.ranked.empty()) {
    out += "\nreproduce:\n";
    const size_t shown = std::min(r.ranked.size(), static_cast<size_t>(o.top));
    for (size_t i = 0; i < shown; ++i) {
      const std::vector<std::string> commands = ReproduceCommands(o, r.ranked[i], r.limits);
      for (size_t k = 0; k < commands.size(); ++k) {
        out += fmt::format("  {:<4}{}\n", k == 0 ? fmt::format("#{}", i + 1) : "", commands[k]);
      }
    }
  }
  return out;
}

}  // namespace easyplan::api
