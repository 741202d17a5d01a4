#include "step/pipeline_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "core/checked_math.h"
#include "core/enum_table.h"

namespace easyplan::step {
namespace {

using PassOrder = std::vector<ScheduledPass>;

ScheduledPass MakePass(PassKind kind, int64_t microbatch, int64_t chunk) {
  ScheduledPass pass;
  pass.kind = kind;
  pass.microbatch = microbatch;
  pass.chunk = chunk;
  return pass;
}

// ScheduleGPipe: forward_one_chunk for every microbatch, then backward_one_chunk for every microbatch.
// Circular (v > 1), ScheduleLoopedBFS: every microbatch through local chunk 0, then 1, ...; then the
// backwards, the last local chunk first and the microbatches in reverse. Local chunk k is model chunk
// k x p + stage.
PassOrder GpipeOrder(int64_t stage, int64_t p, int64_t v, int64_t m) {
  PassOrder out;
  out.reserve(static_cast<size_t>(2 * v * m));
  for (int64_t local = 0; local < v; ++local) {
    for (int64_t j = 0; j < m; ++j) out.push_back(MakePass(PassKind::kForward, j, local * p + stage));
  }
  if (v == 1) {
    for (int64_t j = 0; j < m; ++j) out.push_back(MakePass(PassKind::kBackward, j, stage));
    return out;
  }
  for (int64_t local = v - 1; local >= 0; --local) {
    for (int64_t j = m - 1; j >= 0; --j) out.push_back(MakePass(PassKind::kBackward, j, local * p + stage));
  }
  return out;
}

// forward_backward_pipelining_without_interleaving: num_warmup_microbatches = min(p - rank - 1, m); then
// for i in range(num_microbatches_remaining): forward(warmup + i), backward(i); then the cool-down
// backwards.
PassOrder OneFOneBOrder(int64_t stage, int64_t p, int64_t m) {
  const int64_t warmup = std::min(p - stage - 1, m), remaining = m - warmup;
  PassOrder out;
  out.reserve(static_cast<size_t>(2 * m));
  for (int64_t j = 0; j < warmup; ++j) out.push_back(MakePass(PassKind::kForward, j, stage));
  for (int64_t i = 0; i < remaining; ++i) {
    out.push_back(MakePass(PassKind::kForward, warmup + i, stage));
    out.push_back(MakePass(PassKind::kBackward, i, stage));
  }
  for (int64_t j = remaining; j < m; ++j) out.push_back(MakePass(PassKind::kBackward, j, stage));
  return out;
}

// forward_backward_pipelining_with_interleaving. get_schedule_table: microbatches in groups of p (the
// last group takes the rest), each group through local chunk 0, then 1, ...; virtual microbatch k is
// table[k]. get_model_chunk_id reverses the local chunk for the backward, which takes each local chunk's
// microbatches in order (the FIFO of input_tensors). get_pp_rank_microbatches: warm-up
// (p - rank - 1) x 2 + (V - 1) x p, all of them when that reaches m x V. Local chunk v of stage s is model
// chunk v x p + s.
PassOrder InterleavedOrder(int64_t stage, int64_t p, int64_t v, int64_t m) {
  std::vector<std::pair<int64_t, int64_t>> table;  // (microbatch, local chunk)
  table.reserve(static_cast<size_t>(m * v));
  for (int64_t first = 0; first < m; first += p) {
    const int64_t last = first + p >= m ? m : first + p;
    for (int64_t chunk = 0; chunk < v; ++chunk) {
      for (int64_t j = first; j < last; ++j) table.emplace_back(j, chunk);
    }
  }
  const int64_t total = m * v;
  const int64_t warmup = std::min(total, (p - stage - 1) * 2 + (v - 1) * p), remaining = total - warmup;
  auto forward = [&](int64_t k) {
    const auto [j, local] = table[static_cast<size_t>(k)];
    return MakePass(PassKind::kForward, j, local * p + stage);
  };
  auto backward = [&](int64_t k) {
    const auto [j, local] = table[static_cast<size_t>(k)];
    return MakePass(PassKind::kBackward, j, (v - 1 - local) * p + stage);
  };
  PassOrder out;
  out.reserve(static_cast<size_t>(2 * total));
  for (int64_t k = 0; k < warmup; ++k) out.push_back(forward(k));
  for (int64_t k = 0; k < remaining; ++k) {
    out.push_back(forward(warmup + k));
    out.push_back(backward(k));
  }
  for (int64_t k = remaining; k < total; ++k) out.push_back(backward(k));
  return out;
}

// ZB-H1 as ScheduleInterleavedZeroBubble builds it with one stage per rank: warm-up min(p - rank - 1, m)
// forwards (_get_warmup_ops with multiply_factor 1), then per step a forward (while there are any) and an
// I, followed from step `rank` on by the W of the oldest I without one; the remaining W's last.
PassOrder ZeroBubbleOrder(int64_t stage, int64_t p, int64_t m) {
  const int64_t warmup = std::min(p - stage - 1, m), steady = m - warmup;
  PassOrder out;
  out.reserve(static_cast<size_t>(3 * m));
  std::deque<int64_t> waiting;  // microbatches whose I ran and whose W has not
  int64_t forward = 0, backward = 0;
  for (; forward < warmup; ++forward) out.push_back(MakePass(PassKind::kForward, forward, stage));
  for (int64_t step = 0; step < steady + warmup; ++step) {
    if (step < steady) out.push_back(MakePass(PassKind::kForward, forward++, stage));
    out.push_back(MakePass(PassKind::kBackwardInput, backward, stage));
    waiting.push_back(backward++);
    if (step >= stage) {
      out.push_back(MakePass(PassKind::kWeight, waiting.front(), stage));
      waiting.pop_front();
    }
  }
  for (int64_t j : waiting) out.push_back(MakePass(PassKind::kWeight, j, stage));
  return out;
}

// DualPipe.step() on `rank`. Its phase 0 is the direction whose microbatches enter at this rank's end of the
// pipeline (phase ^= is_in_second_half): for the first half of the ranks the microbatches that enter at
// stage 0 (0 .. m/2 - 1), for the second half those that enter at stage p - 1 (m/2 .. m - 1). The
// direction entering at stage 0 runs chunk `rank` here, the other chunk p - 1 - rank. Each phase's
// forwards and backwards take its microbatches in order (current_f_chunk_id, current_b_chunk_id); a
// backward with enable_zb runs its input gradients alone and queues its W, which _weight_chunk pops
// first in, first out (WeightGradStore).
class DualPipeRank {
 public:
  DualPipeRank(int64_t rank, int64_t p, int64_t m) : rank_(rank), p_(p), half_(m / 2), second_(rank >= p / 2) {}

  PassOrder Build() {
    out_.reserve(static_cast<size_t>(6 * half_));  // F, B or I, and W of each of its 2 x m/2 microbatches
    const int64_t half_ranks = p_ / 2, h = std::min(rank_, p_ - 1 - rank_);
    const bool middle = rank_ == half_ranks - 1 || rank_ == half_ranks;
    // Step 1: nF0.
    for (int64_t i = 0; i < (half_ranks - h - 1) * 2; ++i) Forward(0);
    // Step 2: nF0F1. Off the middle, each F0's send waits for the F1 after it; on the middle ranks the
    // last F1's send waits for step 4.
    std::optional<int64_t> deferred_f1;
    for (int64_t i = 0; i < h + 1; ++i) {
      const int64_t f0 = Forward(0);
      const int64_t f1 = Forward(1);
      if (!middle) {
        out_[static_cast<size_t>(f0)].sent_after = f1;
      } else if (i == h) {
        deferred_f1 = f1;
      }
    }
    // Step 3: nB1W1F1, zero bubble.
    for (int64_t i = 0; i < half_ranks - h - 1; ++i) {
      Backward(1, /*zero_bubble=*/true);
      Weight();
      Forward(1);
    }
    // Step 4, the main step: nF0B1F1B0, the pairs overlapped; the middle ranks' first F0 and B1 are not
    // ("we don't overlap these two chunks to further reduce bubble size"), the F0's send after the B1.
    const int64_t main_steps = half_ - p_ + h + 1;
    for (int64_t i = 0; i < main_steps; ++i) {
      if (i == 0 && middle) {
        const int64_t f0 = Forward(0);
        if (deferred_f1) out_[static_cast<size_t>(*deferred_f1)].sent_after = f0;
        const int64_t b1 = Backward(1, false);
        out_[static_cast<size_t>(f0)].sent_after = b1;
      } else {
        Pair(0, 1);
      }
      Pair(1, 0);
    }
    // Step 5: nB1F1B0.
    for (int64_t i = 0; i < half_ranks - h - 1; ++i) {
      Backward(1, false);
      Pair(1, 0);
    }
    // Step 6: nB1B0, the second half of them zero bubble.
    const int64_t steps = h + 1;
    bool zero_bubble = false;
    for (int64_t i = 0; i < steps; ++i) {
      if (i == steps / 2 && h % 2 == 1) zero_bubble = true;
      Backward(1, zero_bubble);
      if (i == steps / 2 && h % 2 == 0) zero_bubble = true;
      Backward(0, zero_bubble);
    }
    // Step 7: nWB0, zero bubble.
    for (int64_t i = 0; i < half_ranks - h - 1; ++i) {
      Weight();
      Backward(0, true);
    }
    // Step 8: nW.
    for (int64_t i = 0; i < h + 1; ++i) Weight();
    return std::move(out_);
  }

  /// Whether every phase ran its m/2 forwards and backwards and every W was popped (dualpipe.py asserts
  /// the W queue is empty).
  bool Complete() const {
    return forwards_[0] == half_ && forwards_[1] == half_ && backwards_[0] == half_ && backwards_[1] == half_ &&
           weights_.empty();
  }

 private:
  int64_t Direction(int phase) const { return phase ^ (second_ ? 1 : 0); }
  int64_t Chunk(int64_t direction) const { return direction == 0 ? rank_ : p_ - 1 - rank_; }
  int64_t Microbatch(int64_t direction, int64_t k) const { return direction == 0 ? k : half_ + k; }

  int64_t Forward(int phase) {
    const int64_t d = Direction(phase);
    out_.push_back(MakePass(PassKind::kForward, Microbatch(d, forwards_[d]++), Chunk(d)));
    return static_cast<int64_t>(out_.size()) - 1;
  }
  int64_t Backward(int phase, bool zero_bubble) {
    const int64_t d = Direction(phase);
    const int64_t j = Microbatch(d, backwards_[d]++);
    out_.push_back(MakePass(zero_bubble ? PassKind::kBackwardInput : PassKind::kBackward, j, Chunk(d)));
    if (zero_bubble) weights_.emplace_back(j, Chunk(d));
    return static_cast<int64_t>(out_.size()) - 1;
  }
  void Weight() {
    if (weights_.empty()) return;  // Complete() reports the mismatch
    out_.push_back(MakePass(PassKind::kWeight, weights_.front().first, weights_.front().second));
    weights_.pop_front();
  }
  // _forward_backward_chunk(phase0, phase1): the forward of phase0 overlapped with the whole backward of
  // phase1.
  void Pair(int forward_phase, int backward_phase) {
    const int64_t f = Forward(forward_phase);
    Backward(backward_phase, false);
    out_[static_cast<size_t>(f)].overlapped = true;
  }

  int64_t rank_, p_, half_;
  bool second_;
  int64_t forwards_[2] = {0, 0}, backwards_[2] = {0, 0};
  std::deque<std::pair<int64_t, int64_t>> weights_;  // (microbatch, chunk) of each I without its W
  PassOrder out_;
};

// What a pass's input is: the pass that produced it, by (backward?, chunk, microbatch).
struct PassOutput {
  bool backward = false;
  int64_t chunk = 0;
  int64_t microbatch = 0;
};

// The letters of a schedule picture (docs/PIPELINE.md).
constexpr EnumName<PassKind> kPassKindNames[] = {
    {PassKind::kForward, "F"},
    {PassKind::kBackward, "B"},
    {PassKind::kBackwardInput, "I"},
    {PassKind::kWeight, "W"},
};

}  // namespace

std::string_view PassKindName(PassKind kind) { return NameOf(kPassKindNames, kind); }

int64_t DeviceOfChunk(const planner::PipelineSplit& split, int64_t chunk, int64_t microbatch, int64_t microbatches) {
  const int64_t p = split.stages;
  if (split.schedule == planner::PipelineSchedule::kDualPipe && microbatch >= microbatches / 2)
    return p - 1 - chunk % p;
  return chunk % p;
}

int64_t StageOfChunk(const planner::PipelineSplit& split, int64_t chunk) { return chunk % split.stages; }

int64_t PassesPerChunk(planner::PipelineSchedule schedule) {
  return schedule == planner::PipelineSchedule::kZeroBubble || schedule == planner::PipelineSchedule::kDualPipe ? 3 : 2;
}

int64_t SchedulePasses(const planner::PipelineSplit& split, int64_t m) {
  const int64_t factors[] = {split.stages, split.virtual_stages, std::max<int64_t>(0, m),
                             PassesPerChunk(split.schedule)};
  return CheckedProduct(factors).value_or(std::numeric_limits<int64_t>::max());
}

StatusOr<std::vector<std::vector<ScheduledPass>>> ScheduleOrder(const planner::PipelineSplit& split, int64_t m) {
  if (!split.pipelined()) return Status::Internal("ScheduleOrder: the plan has no pipeline (pp=1)");
  EP_RETURN_IF_ERROR(planner::CheckMicrobatches(split, m));
  const int64_t p = split.stages;
  std::vector<PassOrder> out;
  for (int64_t s = 0; s < p; ++s) {
    switch (split.schedule) {
      case planner::PipelineSchedule::kGpipe:
        out.push_back(GpipeOrder(s, p, split.virtual_stages, m));
        break;
      case planner::PipelineSchedule::k1F1B:
        out.push_back(OneFOneBOrder(s, p, m));
        break;
      case planner::PipelineSchedule::kInterleaved:
        out.push_back(InterleavedOrder(s, p, split.virtual_stages, m));
        break;
      case planner::PipelineSchedule::kZeroBubble:
        out.push_back(ZeroBubbleOrder(s, p, m));
        break;
      case planner::PipelineSchedule::kDualPipe: {
        DualPipeRank rank(s, p, m);
        out.push_back(rank.Build());
        if (!rank.Complete()) {
          return Status::Internal(
              fmt::format("the dualpipe order of rank {} (p={}, m={}) does not run every pass", s, p, m));
        }
        break;
      }
    }
  }
  return out;
}

StatusOr<Timeline> SimulateSchedule(const planner::PipelineSplit& split, int64_t m,
                                    const std::vector<StageTimes>& times, bool keep_boxes) {
  if (static_cast<int64_t>(times.size()) != split.stages) {
    return Status::Internal(fmt::format("SimulateSchedule: {} stage times for {} stages", times.size(), split.stages));
  }
  EP_ASSIGN_OR_RETURN(const std::vector<PassOrder> order, ScheduleOrder(split, m));
  const int64_t chunks = split.Chunks();
  const double share = 1.0 / static_cast<double>(split.virtual_stages);
  auto duration = [&](const ScheduledPass& pass) {
    const StageTimes& t = times[static_cast<size_t>(StageOfChunk(split, pass.chunk))];
    switch (pass.kind) {
      case PassKind::kForward:
        return t.forward * share;
      case PassKind::kBackward:
        return t.Backward() * share;
      case PassKind::kBackwardInput:
        return t.backward_input * share;
      case PassKind::kWeight:
        return t.backward_weight * share;
    }
    return 0.0;
  };
  // Per (chunk, microbatch): when a forward's and a backward's output ends on its device, and when it has
  // been sent on.
  const size_t slots = static_cast<size_t>(chunks * m);
  // NaN: not yet (one double a slot, where an optional takes two: m x chunks of them, for every pricing).
  constexpr double kNotYet = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> ended[2] = {std::vector<double>(slots, kNotYet), std::vector<double>(slots, kNotYet)};
  std::vector<double> sent[2] = {std::vector<double>(slots, kNotYet), std::vector<double>(slots, kNotYet)};
  auto slot = [&](int64_t chunk, int64_t microbatch) { return static_cast<size_t>(chunk * m + microbatch); };
  // The input a pass waits for, and whether it comes from another device (then it must have been sent).
  auto input = [&](const ScheduledPass& pass, int64_t device) -> std::optional<std::pair<PassOutput, bool>> {
    PassOutput key;
    key.microbatch = pass.microbatch;
    if (pass.kind == PassKind::kForward) {
      if (pass.chunk == 0) return std::nullopt;
      key.chunk = pass.chunk - 1;
    } else if (pass.kind == PassKind::kWeight) {
      key.backward = true;
      key.chunk = pass.chunk;
    } else if (pass.chunk == chunks - 1) {
      key.chunk = pass.chunk;  // the loss: the last chunk's own forward
    } else {
      key.backward = true;
      key.chunk = pass.chunk + 1;
    }
    const bool remote = DeviceOfChunk(split, key.chunk, key.microbatch, m) != device;
    return std::make_pair(key, remote);
  };
  auto arrived = [&](const std::optional<std::pair<PassOutput, bool>>& in) -> std::optional<double> {
    if (!in) return 0.0;
    const auto& [key, remote] = *in;
    const size_t k = slot(key.chunk, key.microbatch);
    const double at = remote ? sent[key.backward][k] : ended[key.backward][k];
    return std::isnan(at) ? std::nullopt : std::optional<double>(at);
  };

  const size_t devices = order.size();
  Timeline out;
  out.busy.assign(devices, 0.0);
  std::vector<size_t> next(devices, 0);
  std::vector<double> free(devices, 0.0);
  std::vector<std::vector<TimelineBox>> boxes(devices);
  if (keep_boxes) {
    for (size_t d = 0; d < devices; ++d) boxes[d].reserve(order[d].size());
  }
  // Per device: the outputs whose send waits for a later pass of it (index -> keys).
  std::vector<std::vector<std::pair<int64_t, PassOutput>>> deferred(devices);
  size_t done = 0, total = 0;
  for (const PassOrder& o : order) total += o.size();
  while (done < total) {
    bool progress = false;
    for (size_t d = 0; d < devices; ++d) {
      const PassOrder& passes = order[d];
      while (next[d] < passes.size()) {
        const size_t i = next[d];
        const size_t count = passes[i].overlapped && i + 1 < passes.size() ? 2 : 1;
        double start = free[d];
        bool ready = true;
        for (size_t k = i; k < i + count && ready; ++k) {
          const std::optional<double> at = arrived(input(passes[k], static_cast<int64_t>(d)));
          ready = at.has_value();
          if (ready) start = std::max(start, *at);
        }
        if (!ready) break;
        double t = start;
        double ends[2] = {0, 0};  // of this pass and, for an overlapped pair, the next
        for (size_t k = i; k < i + count; ++k) {
          const ScheduledPass& pass = passes[k];
          const double seconds = duration(pass);
          if (keep_boxes) {
            boxes[d].push_back({.device = static_cast<int64_t>(d),
                                .kind = pass.kind,
                                .microbatch = pass.microbatch,
                                .chunk = pass.chunk,
                                .start = t,
                                .end = t + seconds,
                                .overlapped = count > 1});
          }
          t += seconds;
          ends[k - i] = t;
          out.busy[d] += seconds;
        }
        for (size_t k = i; k < i + count; ++k) {
          const ScheduledPass& pass = passes[k];
          const bool backward = pass.kind == PassKind::kBackward || pass.kind == PassKind::kBackwardInput;
          if (pass.kind == PassKind::kWeight) continue;
          const size_t s = slot(pass.chunk, pass.microbatch);
          // A pair's outputs leave when the pair ends; a deferred send after its later pass.
          ended[backward][s] = count > 1 ? t : ends[k - i];
          if (pass.sent_after && static_cast<size_t>(*pass.sent_after) > k) {
            PassOutput key;
            key.backward = backward;
            key.chunk = pass.chunk;
            key.microbatch = pass.microbatch;
            deferred[d].emplace_back(*pass.sent_after, key);
          } else {
            sent[backward][s] = count > 1 ? t : ended[backward][s];
          }
        }
        // Sends deferred to one of these passes leave at its end.
        for (size_t k = i; k < i + count; ++k) {
          const double at = ends[k - i];
          for (const auto& [after, key] : deferred[d]) {
            if (static_cast<size_t>(after) == k)
              sent[key.backward][slot(key.chunk, key.microbatch)] = count > 1 ? t : at;
          }
        }
        free[d] = t;
        next[d] += count;
        done += count;
        progress = true;
      }
    }
    if (!progress) {
      std::string where;
      for (size_t d = 0; d < devices; ++d) {
        if (next[d] >= order[d].size()) continue;
        const ScheduledPass& pass = order[d][next[d]];
        where += fmt::format("{}device {} at {}{} of chunk {}", where.empty() ? "" : ", ", d, PassKindName(pass.kind),
                             pass.microbatch, pass.chunk);
      }
      return Status::Internal(fmt::format("the {} order deadlocks (p={}, m={}): {}",
                                          planner::PipelineScheduleName(split.schedule), split.stages, m, where));
    }
  }
  for (double end : free) out.end = std::max(out.end, end);
  if (keep_boxes) {
    out.boxes.reserve(total);
    for (std::vector<TimelineBox>& device : boxes) out.boxes.insert(out.boxes.end(), device.begin(), device.end());
  }
  return out;
}

}  // namespace easyplan::step
