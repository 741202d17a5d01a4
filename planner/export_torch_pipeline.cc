#include "planner/export_torch_pipeline.h"

#include <fmt/format.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "planner/pipeline_stages.h"

// Sources: pytorch/pytorch torch/distributed/pipelining/schedules.py at 00722e648b740f91d0e71494baa17891749fd291
// (schemas/runtimes/torch_pipelining.yaml); pytorch/torchtitan torchtitan/config/job_config.py at
// 6404b932421f5ce382e7dac5ad381b2c17b1373c (module_fqns_per_model_part).

namespace easyplan::planner {
namespace {

struct TorchSchedule {
  std::string_view cls;   ///< the schedule class
  std::string_view name;  ///< its get_schedule_class name
};

StatusOr<TorchSchedule> ScheduleOf(const PipelineSplit& split) {
  switch (split.schedule) {
    case PipelineSchedule::kGpipe:
      // Circular: several stages per rank, breadth first (every microbatch through one local stage before
      // the next), stage index local_index x pp + rank.
      if (split.virtual_stages > 1) return TorchSchedule{"ScheduleLoopedBFS", "LoopedBFS"};
      return TorchSchedule{"ScheduleGPipe", "GPipe"};
    case PipelineSchedule::k1F1B:
      return TorchSchedule{"Schedule1F1B", "1F1B"};
    case PipelineSchedule::kInterleaved:
      // Several stages per rank, depth first; stage index local_index x pp + rank.
      return TorchSchedule{"ScheduleInterleaved1F1B", "Interleaved1F1B"};
    case PipelineSchedule::kZeroBubble:
      // "In particular this is implementing the ZB1P schedule in the paper": ZB-H1, easyplan's zero-bubble,
      // with the stages of the plan's split (one per rank). ScheduleZBVZeroBubble is the V-shaped ZB-V, with
      // exactly two stages per rank.
      return TorchSchedule{"ScheduleInterleavedZeroBubble", "InterleavedZeroBubble"};
    case PipelineSchedule::kDualPipe:
      break;
  }
  // ScheduleDualPipeV: two stages per rank in a V (generate_stage_to_rank_mapping(style="v"): rank r runs
  // stages r and 2p-1-r of 2p), each layer once. DualPipe as the plan lays it out keeps two copies of every
  // stage, one per direction.
  return Status::BadInput(
      {},
      "--pp-schedule dualpipe: torch.distributed.pipelining runs DualPipe only as ScheduleDualPipeV, whose 2 x pp "
      "stages sit in a V (rank r runs stages r and 2pp-1-r, each layer once), while this plan keeps DualPipe's "
      "two copies of every stage",
      {"plan it with --pp-schedule zero-bubble (ScheduleInterleavedZeroBubble), 1f1b, gpipe or interleaved"});
}

// The module a parameter belongs to: the name through its layer number ("model.layers.3"), or outside the
// layers the name without its last segment ("model.embed_tokens.weight" -> "model.embed_tokens").
std::string ModuleOf(const std::string& name, bool layer) {
  if (layer) {
    size_t start = 0;
    while (start < name.size()) {
      size_t end = name.find_first_of("/.", start);
      if (end == std::string::npos) end = name.size();
      const std::string_view segment(name.data() + start, end - start);
      if (!segment.empty() && segment.find_first_not_of("0123456789") == std::string_view::npos) {
        return name.substr(0, end);
      }
      start = end + 1;
    }
  }
  const size_t last = name.find_last_of("/.");
  return last == std::string::npos ? name : name.substr(0, last);
}

}  // namespace

StatusOr<Json> TorchPipelineJson(const Plan& plan, const ParamTree& tree, const RuntimeVocabulary& vocabulary,
                                 std::optional<int64_t> microbatches) {
  const PipelineSplit& split = plan.pipeline;
  EP_ASSIGN_OR_RETURN(const TorchSchedule schedule, ScheduleOf(split));
  EP_RETURN_IF_ERROR(vocabulary.Check("classes", schedule.cls));
  EP_RETURN_IF_ERROR(vocabulary.Check("schedule_names", schedule.name));

  // The first layer of each chunk; layers past the split belong to the last chunk (PipelineSplit).
  const int64_t chunks = split.Chunks();
  std::vector<int64_t> first(static_cast<size_t>(chunks), 0);
  for (int64_t c = 1; c < chunks; ++c) {
    first[static_cast<size_t>(c)] = first[static_cast<size_t>(c - 1)] + split.chunk_layers[static_cast<size_t>(c - 1)];
  }
  auto chunk_of_layer = [&](int64_t layer) {
    int64_t c = chunks - 1;
    while (c > 0 && layer < first[static_cast<size_t>(c)]) --c;
    return c;
  };
  // Per chunk its layers' modules; the first chunk starts with the modules outside the layers that sit on
  // the first stage (the embeddings), the last ends with those on the last (the final norm, the head).
  std::vector<std::vector<std::string>> modules(static_cast<size_t>(chunks));
  std::vector<std::string> before, after;
  std::set<std::pair<int64_t, std::string>> seen;
  auto add = [&](std::vector<std::string>& list, int64_t chunk, std::string module) {
    if (seen.emplace(chunk, module).second) list.push_back(std::move(module));
  };
  for (const ParamPlan& param : plan.params) {
    const std::string& name = tree.tensors[static_cast<size_t>(param.tensor)].name;
    if (std::optional<int64_t> layer = LayerIndexOf(name)) {
      const int64_t chunk = chunk_of_layer(*layer);
      add(modules[static_cast<size_t>(chunk)], chunk, ModuleOf(name, true));
      continue;
    }
    // A tied embedding sits on both ends: the first stage's lookup and the last stage's head.
    const StagePlacement& stages = plan.groups[static_cast<size_t>(param.group)].stages;
    for (int64_t stage : {stages.stage, stages.also}) {
      if (stage == 0) add(before, 0, ModuleOf(name, false));
      if (stage == split.stages - 1 && stage > 0) add(after, chunks - 1, ModuleOf(name, false));
    }
  }
  modules.front().insert(modules.front().begin(), before.begin(), before.end());
  modules.back().insert(modules.back().end(), after.begin(), after.end());

  Json out = Json::object();
  out["pp_dim_name"] = std::string(kPipelineAxis);
  out["schedule"] = std::string(schedule.cls);
  out["schedule_name"] = std::string(schedule.name);
  out["stages_per_rank"] = split.virtual_stages;
  if (microbatches) out["n_microbatches"] = *microbatches;
  Json parts = Json::array();
  for (const std::vector<std::string>& part : modules) parts.push_back(Json(part));
  out["module_fqns_per_model_part"] = std::move(parts);
  Json ranks = Json::array();
  for (int64_t c = 0; c < chunks; ++c) ranks.push_back(c % split.stages);
  out["stage_pp_ranks"] = std::move(ranks);
  return out;
}

}  // namespace easyplan::planner
