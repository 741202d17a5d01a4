#include "planner/pipeline.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/enum_table.h"
#include "core/number_literal.h"

namespace easyplan::planner {
namespace {

// The schedules of docs/PIPELINE.md, as options and reports name them.
constexpr EnumName<PipelineSchedule> kScheduleNames[] = {
    {PipelineSchedule::kGpipe, "gpipe"},
    {PipelineSchedule::k1F1B, "1f1b"},
    {PipelineSchedule::kInterleaved, "interleaved"},
    {PipelineSchedule::kZeroBubble, "zero-bubble"},
    {PipelineSchedule::kDualPipe, "dualpipe"},
};

// The nearest multiples of `step` around `m` that are at least `least`, for a message.
std::string NearestValid(int64_t m, int64_t step, int64_t least) {
  const int64_t up = std::max(least, (m + step - 1) / step * step);
  const int64_t down = m / step * step;
  if (down >= least && down != up) return fmt::format("{} or {}", down, up);
  return std::to_string(up);
}

// The pipeline has more model chunks (pp x --virtual-stages) than the model has layers. The constraint
// is the product: the note says what fits with the pp given, and with the virtual stages given.
Status TooFewLayers(int64_t layers, const PipelineSplit& split) {
  const int64_t p = split.stages, v = split.virtual_stages;
  if (v == 1) {
    return Status::BadInput(
        {}, fmt::format("the pipeline has {} stages and the model {} layers: a stage would hold none", p, layers),
        {fmt::format("use at most pp={} stages (one layer each)", layers)});
  }
  std::vector<std::string> notes = {fmt::format(
      "each model chunk holds at least one layer, so pp x --virtual-stages may be at most the {} layers", layers)};
  if (layers / p >= 2) {
    notes.push_back(fmt::format("with pp={}: --virtual-stages {} or fewer", p, layers / p));
  } else if (layers / p == 1) {
    notes.push_back(fmt::format("with pp={}: one layer per stage, so drop --virtual-stages", p));
  }
  if (layers / v >= 2) {
    notes.push_back(fmt::format("with --virtual-stages {}: pp={} or fewer", v, layers / v));
  } else if (layers / 2 >= 2) {
    notes.push_back(
        fmt::format("--virtual-stages {} is more than any pipeline of {} layers takes: at most {} (with "
                    "pp=2)",
                    v, layers, layers / 2));
  } else {
    notes.push_back(fmt::format("{} layers leave no room for virtual stages: drop --virtual-stages", layers));
  }
  return Status::BadInput({},
                          fmt::format("the pipeline has {} model chunks (pp={} x --virtual-stages {}) and the model {} "
                                      "layers: a chunk would hold none",
                                      p * v, p, v, layers),
                          notes);
}

}  // namespace

std::string_view PipelineScheduleName(PipelineSchedule schedule) { return NameOf(kScheduleNames, schedule); }

std::optional<PipelineSchedule> ParsePipelineSchedule(std::string_view text) { return ParseEnum(kScheduleNames, text); }

int64_t PipelineSplit::StageOfLayer(int64_t layer) const {
  int64_t end = 0;
  for (size_t c = 0; c < chunk_layers.size(); ++c) {
    end += chunk_layers[c];
    if (layer < end) return static_cast<int64_t>(c) % stages;
  }
  return stages - 1;
}

std::vector<int64_t> PipelineSplit::LayersOfStage(int64_t stage) const {
  std::vector<int64_t> out;
  int64_t first = 0;
  for (size_t c = 0; c < chunk_layers.size(); ++c) {
    if (static_cast<int64_t>(c) % stages == stage) {
      for (int64_t l = first; l < first + chunk_layers[c]; ++l) out.push_back(l);
    }
    first += chunk_layers[c];
  }
  return out;
}

int64_t PipelineSplit::LayerCount(int64_t stage) const {
  int64_t count = 0;
  for (size_t c = 0; c < chunk_layers.size(); ++c) {
    if (static_cast<int64_t>(c) % stages == stage) count += chunk_layers[c];
  }
  return count;
}

StatusOr<std::vector<int64_t>> ParseLayerCounts(std::string_view text) {
  std::string_view item;
  std::optional<std::vector<int64_t>> counts = ParseDecimalList(text, ',', &item);
  if (!counts) {
    return Status::BadInput({}, fmt::format("--pp-layers expects layer counts like 9,8,8,7 (plain decimals), "
                                            "found '{}' in '{}'",
                                            item, text));
  }
  return *std::move(counts);
}

Status CheckSchedule(int64_t stages, int64_t virtual_stages, PipelineSchedule schedule) {
  if (stages <= 1) return Status();
  if (virtual_stages > 1 && schedule != PipelineSchedule::kInterleaved && schedule != PipelineSchedule::kGpipe) {
    return Status::BadInput(
        {},
        fmt::format("--virtual-stages {} needs --pp-schedule interleaved or gpipe (found {})", virtual_stages,
                    PipelineScheduleName(schedule)),
        {"interleaved runs several model chunks per stage depth first (Megatron-LM), gpipe breadth first (the "
         "circular pipeline of MaxText's num_pipeline_repeats and PyTorch's ScheduleLoopedBFS)"});
  }
  if (schedule == PipelineSchedule::kDualPipe && stages % 2 != 0) {
    // DualPipe.step() asserts num_ranks % 2 == 0: each device holds stages s and p-1-s.
    return Status::BadInput(
        {}, fmt::format("--pp-schedule dualpipe runs two directions over an even stage count; pp={} is odd", stages),
        {fmt::format("use pp={} or pp={}, or another --pp-schedule", stages - 1, stages + 1)});
  }
  return Status();
}

StatusOr<PipelineSplit> SplitLayers(int64_t layers, int64_t stages, int64_t virtual_stages, PipelineSchedule schedule,
                                    const std::vector<int64_t>& explicit_counts) {
  PipelineSplit split;
  split.stages = std::max<int64_t>(1, stages);
  split.virtual_stages = std::max<int64_t>(1, virtual_stages);
  split.schedule = schedule;
  EP_RETURN_IF_ERROR(CheckSchedule(split.stages, split.virtual_stages, schedule));
  const int64_t chunks = split.Chunks();
  if (!explicit_counts.empty()) {
    if (split.virtual_stages > 1 && static_cast<int64_t>(explicit_counts.size()) == split.stages) {
      // One count per stage: each stage's layers dealt to its chunks as evenly as they go, the earlier
      // chunks taking the extra ones (chunk c of stage s is chunk c x p + s of the model).
      std::vector<int64_t> per_chunk(static_cast<size_t>(chunks), 0);
      for (int64_t s = 0; s < split.stages; ++s) {
        const int64_t total = explicit_counts[static_cast<size_t>(s)];
        // The model's first chunk may hold the embedding alone and its last the head and the loss alone
        // (Megatron-Core's account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split,
        // as the Llama 3 405B runs split 126 layers over 16 x 8 chunks): that chunk then takes no layer.
        const bool first = s == 0, last = s == split.stages - 1;
        const int64_t empty = total == split.virtual_stages - 1 && (first || last) ? 1 : 0;
        if (total + empty < split.virtual_stages) {
          return Status::BadInput({},
                                  fmt::format("--pp-layers gives stage {} {} layers, fewer than its {} model chunks "
                                              "(--virtual-stages)",
                                              s, total, split.virtual_stages));
        }
        std::vector<int64_t> chunks_of_stage;
        for (int64_t v = 0; v < split.virtual_stages; ++v) chunks_of_stage.push_back(v * split.stages + s);
        if (empty > 0) {
          // The empty chunk: the model's first (stage 0) or its last (the last stage).
          const int64_t gone = first ? chunks_of_stage.front() : chunks_of_stage.back();
          chunks_of_stage.erase(std::find(chunks_of_stage.begin(), chunks_of_stage.end(), gone));
        }
        const int64_t n = static_cast<int64_t>(chunks_of_stage.size());
        for (int64_t v = 0; v < n; ++v) {
          per_chunk[static_cast<size_t>(chunks_of_stage[static_cast<size_t>(v)])] = total / n + (v < total % n ? 1 : 0);
        }
      }
      return SplitLayers(layers, stages, virtual_stages, schedule, per_chunk);
    }
    if (static_cast<int64_t>(explicit_counts.size()) != chunks) {
      return Status::BadInput(
          {}, fmt::format("--pp-layers gives {} counts, and the pipeline has {} {} (pp={}{})", explicit_counts.size(),
                          chunks, split.virtual_stages > 1 ? "model chunks" : "stages", split.stages,
                          split.virtual_stages > 1 ? fmt::format(" x --virtual-stages {}", split.virtual_stages)
                                                   : std::string()));
    }
    int64_t sum = 0;
    for (size_t c = 0; c < explicit_counts.size(); ++c) {
      // Only the model's first and last chunks may be empty (the embedding, or the head and the loss, alone).
      if (explicit_counts[c] < 1 && !(explicit_counts[c] == 0 && (c == 0 || c + 1 == explicit_counts.size()))) {
        return Status::BadInput({}, fmt::format("--pp-layers gives chunk {} no layers: only the first and the last "
                                                "may hold none (the embedding, or the head and the loss, alone)",
                                                c));
      }
      if (__builtin_add_overflow(sum, explicit_counts[c], &sum)) {
        return Status::BadInput({}, "--pp-layers: the counts overflow int64");
      }
    }
    if (sum != layers) {
      return Status::BadInput({}, fmt::format("--pp-layers sums to {} layers, and the model has {}", sum, layers));
    }
    split.chunk_layers = explicit_counts;
    return split;
  }
  if (layers < chunks) return TooFewLayers(layers, split);
  const int64_t base = layers / chunks;
  int64_t extra = layers % chunks;
  split.chunk_layers.assign(static_cast<size_t>(chunks), base);
  if (extra == 0) return split;
  // The larger counts go to the middle chunks first: the first chunk also embeds, the last also runs the
  // final norm, the head and the loss.
  for (int64_t c = 1; c + 1 < chunks && extra > 0; ++c, --extra) ++split.chunk_layers[static_cast<size_t>(c)];
  if (extra > 0) {
    ++split.chunk_layers.front();
    --extra;
  }
  if (extra > 0) ++split.chunk_layers.back();
  split.balanced_by_us = true;
  std::string counts;
  for (int64_t c : split.chunk_layers) counts += (counts.empty() ? "" : ",") + std::to_string(c);
  split.how = fmt::format(
      "{} layers do not divide into {} {}: --pp-layers {} (the extra layers on the middle {}, since the first "
      "also embeds and the last runs the head and the loss)",
      layers, chunks, split.virtual_stages > 1 ? "model chunks" : "stages", counts,
      split.virtual_stages > 1 ? "chunks" : "stages");
  return split;
}

Status CheckMicrobatches(const PipelineSplit& split, int64_t m) {
  if (!split.pipelined()) return Status();
  const int64_t p = split.stages;
  const std::string_view name = PipelineScheduleName(split.schedule);
  switch (split.schedule) {
    case PipelineSchedule::kGpipe:
      // Circular: microbatch 0 comes back to stage 0 for its next chunk after p chunk passes; with fewer
      // microbatches stage 0 waits for it beyond the bubble the formula counts (MaxText's base.yml: the
      // circular transfer needs more microbatches than stages to run asynchronously).
      if (split.virtual_stages == 1 || m >= p) return Status();
      return Status::BadInput(
          {},
          fmt::format("--microbatches {} is fewer than the {} pipeline stages: the circular gpipe schedule "
                      "(--virtual-stages {}) sends each microbatch round the stages {} times, and stage 0 idles "
                      "until the first one is back",
                      m, p, split.virtual_stages, split.virtual_stages),
          {fmt::format("use --microbatches {} or more, or drop --virtual-stages", p)});
    case PipelineSchedule::k1F1B:
    case PipelineSchedule::kZeroBubble:
      if (m >= p) return Status();
      return Status::BadInput(
          {},
          fmt::format(
              "--microbatches {} is fewer than the {} pipeline stages: the {} schedule's warm-up needs at least "
              "one microbatch per stage",
              m, p, name),
          {fmt::format("use --microbatches {} or more (the bubble is (p-1)/(m+p-1) of the step: {} at m={})", p,
                       fmt::format("{:.0f}%", 100.0 * static_cast<double>(p - 1) / static_cast<double>(2 * p - 1)), p),
           "or --pp-schedule gpipe, which runs any count at a larger bubble"});
    case PipelineSchedule::kInterleaved:
      if (m >= p && m % p == 0) return Status();
      return Status::BadInput(
          {},
          fmt::format("--microbatches {} is not a multiple of the {} pipeline stages, which the interleaved schedule "
                      "needs (Megatron-LM asserts it)",
                      m, p),
          {fmt::format("use --microbatches {}", NearestValid(m, p, p))});
    case PipelineSchedule::kDualPipe:
      EP_RETURN_IF_ERROR(CheckSchedule(p, split.virtual_stages, split.schedule));
      // DualPipe.step() asserts num_chunks % 2 == 0 and num_chunks >= num_ranks * 2: its main step runs
      // m/2 - p + 1 times on the end ranks.
      if (m >= 2 * p && m % 2 == 0) return Status();
      return Status::BadInput(
          {},
          fmt::format("--microbatches {}: the dualpipe schedule feeds half the microbatches from each end, so it "
                      "needs an even count of at least twice the {} stages (DualPipe asserts it)",
                      m, p),
          {fmt::format("use --microbatches {}", NearestValid(m, 2, 2 * p))});
  }
  return Status();
}

double InFlightMicrobatches(const PipelineSplit& split, int64_t stage, int64_t microbatches) {
  const double m = static_cast<double>(std::max<int64_t>(1, microbatches));
  if (!split.pipelined()) return 1;
  const int64_t p = split.stages;
  switch (split.schedule) {
    case PipelineSchedule::kGpipe:
      return m;
    case PipelineSchedule::k1F1B:
    case PipelineSchedule::kZeroBubble:
      return std::min(m, static_cast<double>(p - stage));
    case PipelineSchedule::kInterleaved: {
      // Chunk-microbatches in flight: the warm-up plus the steady state's one, each 1/V of the stage.
      const double v = static_cast<double>(split.virtual_stages);
      const double warmup = static_cast<double>((p - stage - 1) * 2 + (split.virtual_stages - 1) * p);
      return std::min(m * v, warmup + 1) / v;
    }
    case PipelineSchedule::kDualPipe:
      return std::min(m, static_cast<double>(p + 1));
  }
  return 1;
}

int64_t ParameterCopies(const PipelineSplit& split) {
  return split.pipelined() && split.schedule == PipelineSchedule::kDualPipe ? 2 : 1;
}

}  // namespace easyplan::planner
