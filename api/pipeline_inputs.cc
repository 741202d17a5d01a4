#include "api/pipeline_inputs.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/forward_model.h"
#include "api/option_checks.h"
#include "planner/pipeline_stages.h"
#include "schemas/model_dims.h"

namespace easyplan::api {
namespace {

// The layers a pipeline splits: the config's num_hidden_layers, else (a tree of the user's own) one past
// the highest layer number in the tree's names.
int64_t LayerCount(const PlanInputs& inputs) {
  if (inputs.has_config()) {
    if (StatusOr<schemas::ModelDims> dims = schemas::ModelDimsOf(inputs.resolved()); dims.ok() && dims->layers > 0) {
      return dims->layers;
    }
  }
  int64_t layers = 0;
  for (const TensorEntry& t : inputs.tree->tensors) {
    if (std::optional<int64_t> layer = planner::LayerIndexOf(t.name)) layers = std::max(layers, *layer + 1);
  }
  return layers;
}

bool EndsWithName(const std::string& name, const std::string& suffix) {
  return !suffix.empty() && name.size() >= suffix.size() && name.ends_with(suffix) &&
         (name.size() == suffix.size() || name[name.size() - suffix.size() - 1] == '/');
}

// A name segment that reads as an embedding table, for a tree without a family forward structure.
bool LooksLikeEmbedding(const std::string& name) {
  size_t start = 0;
  while (start < name.size()) {
    size_t end = name.find_first_of("/.", start);
    if (end == std::string::npos) end = name.size();
    const std::string_view segment(name.data() + start, end - start);
    if (segment.find("embed") != std::string_view::npos || segment == "wte" || segment == "wpe") return true;
    start = end + 1;
  }
  return false;
}

// Where each tensor outside the layers goes: the token and position embeddings to the first stage (the
// token embedding also to the last when tied), everything else to the last.
std::vector<planner::OuterTensor> OuterTensors(const PlanInputs& inputs) {
  const ParamTree& tree = *inputs.tree;
  std::vector<planner::OuterTensor> outer(tree.tensors.size(), planner::OuterTensor::kLast);
  std::string embedding, positions, head;
  bool tied = false, tied_by_tree = false;
  if (inputs.has_config()) {
    if (StatusOr<schemas::ModelDims> dims = schemas::ModelDimsOf(inputs.resolved()); dims.ok()) {
      tied = dims->tied_embeddings;
    }
    if (auto forward = ForwardPassOf(*inputs.model, "the pipeline split", ""); forward.ok()) {
      embedding = (*forward)->structure.embedding;
      positions = (*forward)->structure.positions;
      head = (*forward)->structure.head;
      tied_by_tree = (*forward)->structure.tied_by_tree;
    }
  }
  // The name the family's structure uses: the EasyDeL tensor an HF-layout tensor stands for.
  auto easydel_name = [&](size_t t) -> const std::string& {
    if (inputs.links && t < inputs.links->size() && (*inputs.links)[t].has_counterpart) {
      return (*inputs.links)[t].rule_name;
    }
    return tree.tensors[t].name;
  };
  if (tied_by_tree) {
    tied = std::none_of(tree.tensors.begin(), tree.tensors.end(),
                        [&](const TensorEntry& t) { return EndsWithName(t.name, head); });
  }
  for (size_t t = 0; t < tree.tensors.size(); ++t) {
    const std::string& name = easydel_name(t);
    const bool token = embedding.empty() ? LooksLikeEmbedding(name) && name.find("pos") == std::string::npos
                                         : EndsWithName(name, embedding);
    const bool position = positions.empty() ? false : EndsWithName(name, positions);
    if (token) {
      outer[t] = tied ? planner::OuterTensor::kFirstAndLast : planner::OuterTensor::kFirst;
    } else if (position || (embedding.empty() && LooksLikeEmbedding(name))) {
      outer[t] = planner::OuterTensor::kFirst;
    }
  }
  return outer;
}

// Per stage, the matmul parameters a token passes through: each tensor of rank 2 or more on its stages,
// routed experts at top_k / experts of theirs (balanced routing), a lookup-only embedding at none.
std::vector<double> StageWork(const PlanInputs& inputs, const PipelineRoles& roles) {
  const planner::PipelineSplit& split = inputs.pipeline;
  const std::vector<planner::OuterTensor>& outer = roles.outer;
  const double routed = roles.routed;
  std::vector<double> work(static_cast<size_t>(split.stages), 0.0);
  const ParamTree& tree = *inputs.tree;
  for (size_t t = 0; t < tree.tensors.size(); ++t) {
    const TensorEntry& tensor = tree.tensors[t];
    if (tensor.shape.rank() < 2) continue;
    const bool layer = roles.layer_of[t] >= 0;
    if (!layer && outer[t] == planner::OuterTensor::kFirst) continue;  // a lookup, not a matmul
    double elements = static_cast<double>(tensor.shape.NumElements().value_or(0));
    const bool expert =
        tensor.name.find("/experts/") != std::string::npos || tensor.name.find(".experts.") != std::string::npos;
    if (expert) elements *= routed;
    const planner::StagePlacement& at = inputs.placements[t];
    // A tied embedding works as the head on the last stage only; the first stage looks rows up.
    const int64_t stage = !layer && outer[t] == planner::OuterTensor::kFirstAndLast ? split.stages - 1 : at.stage;
    if (stage >= 0) work[static_cast<size_t>(stage)] += elements;
  }
  return work;
}

PipelineRoles RolesOf(const PlanInputs& inputs) {
  PipelineRoles roles;
  roles.layers = LayerCount(inputs);
  roles.layer_of.reserve(inputs.tree->tensors.size());
  for (const TensorEntry& t : inputs.tree->tensors)
    roles.layer_of.push_back(planner::LayerIndexOf(t.name).value_or(-1));
  roles.outer = OuterTensors(inputs);
  if (inputs.has_config()) {
    if (StatusOr<schemas::ModelDims> dims = schemas::ModelDimsOf(inputs.resolved());
        dims.ok() && dims->experts > 0 && dims->top_k > 0) {
      roles.routed = static_cast<double>(dims->top_k) / static_cast<double>(dims->experts);
    }
  }
  return roles;
}

}  // namespace

Status AddPipeline(PlanInputs& inputs, const PipelineOptions& options) {
  EP_RETURN_IF_ERROR(CheckOptionValue("pp_schedule", Json(options.schedule)));
  EP_RETURN_IF_ERROR(CheckOptionValue("virtual_stages", Json(options.virtual_stages)));
  const std::optional<int> axis = inputs.mesh.AxisIndex(std::string(planner::kPipelineAxis));
  const int64_t stages = axis ? inputs.mesh.shape[static_cast<size_t>(*axis)] : 1;
  if (stages <= 1) {
    const char* given = options.schedule != PipelineOptions().schedule ? "--pp-schedule"
                        : options.virtual_stages != 1                  ? "--virtual-stages"
                        : !options.layers.empty()                      ? "--pp-layers"
                                                                       : nullptr;
    if (given != nullptr) {
      return Status::BadInput({}, fmt::format("{} configures a pipeline, and the mesh has no pp axis above 1", given),
                              {"add the stages to the mesh, e.g. --mesh pp=4,fsdp=-1"});
    }
    return Status();
  }
  if (!options.supported) {
    return Status::BadInput(
        {}, fmt::format("--mesh pp={}: this command does not lay out a pipeline", stages),
        {"plan, validate, memory, cost, check, export and report take a pp axis (docs/PIPELINE.md); drop pp here to "
         "use the other axes"});
  }
  const planner::PipelineSchedule schedule = *planner::ParsePipelineSchedule(options.schedule);
  EP_ASSIGN_OR_RETURN(const std::vector<int64_t> counts, planner::ParseLayerCounts(options.layers));
  if (options.roles && options.roles->outer.size() == inputs.tree->tensors.size())
    inputs.pipeline_roles = options.roles;
  if (!inputs.pipeline_roles || inputs.pipeline_roles->outer.size() != inputs.tree->tensors.size()) {
    inputs.pipeline_roles = std::make_shared<const PipelineRoles>(RolesOf(inputs));
  }
  const PipelineRoles& roles = *inputs.pipeline_roles;
  const int64_t layers = roles.layers;
  if (layers <= 0) {
    return Status::BadInput({},
                            fmt::format("--mesh pp={}: the tree has no numbered layers to split into stages", stages),
                            {"a layer's tensors have its number in their name (model/layers/3/...)"});
  }
  EP_ASSIGN_OR_RETURN(inputs.pipeline, planner::SplitLayers(layers, stages, options.virtual_stages, schedule, counts));
  inputs.pp_axis = *axis;
  inputs.microbatches = options.microbatches;
  inputs.placements = planner::PlaceOnStages(roles.layer_of, inputs.pipeline, roles.outer);
  inputs.stage_work = StageWork(inputs, roles);
  return Status();
}

void AddPipelineFindings(const PlanInputs& inputs, planner::Plan& plan) {
  const planner::PipelineSplit& split = inputs.pipeline;
  if (!split.pipelined()) return;
  std::vector<planner::Finding> added;
  if (inputs.microbatches) {
    if (Status fits = planner::CheckMicrobatches(split, *inputs.microbatches); !fits.ok()) {
      added.push_back({.code = planner::FindingCode::kPipelineMicrobatches,
                       .severity = planner::FindingSeverity(planner::FindingCode::kPipelineMicrobatches),
                       .message = fits.diag().message,
                       .notes = fits.diag().notes});
    }
  }
  double total = 0;
  for (double w : inputs.stage_work) total += w;
  const double mean = inputs.stage_work.empty() ? 0 : total / static_cast<double>(inputs.stage_work.size());
  for (size_t s = 0; s < inputs.stage_work.size() && mean > 0; ++s) {
    const double excess = inputs.stage_work[s] / mean - 1;
    if (excess <= 0.10) continue;
    std::string layers;
    for (int64_t c : split.chunk_layers) layers += (layers.empty() ? "" : ",") + std::to_string(c);
    added.push_back(
        {.code = planner::FindingCode::kPipelineImbalance,
         .severity = planner::FindingSeverity(planner::FindingCode::kPipelineImbalance),
         .message = fmt::format("pipeline stage {} has {:.0f}% more work than the stages' mean ({} layers; the "
                                "matmul parameters a token passes through there): every stage waits for it",
                                s, 100 * excess, split.LayerCount(static_cast<int64_t>(s))),
         .notes = {fmt::format("layers per stage: {}; --pp-layers moves layers to the lighter stages "
                               "(the first stage also embeds, the last runs the head)",
                               layers)}});
  }
  if (added.empty()) return;
  for (planner::Finding& f : added) plan.findings.push_back(std::move(f));
  std::stable_sort(plan.findings.begin(), plan.findings.end(),
                   [](const planner::Finding& a, const planner::Finding& b) {
                     return static_cast<int>(a.severity) > static_cast<int>(b.severity);
                   });
}

}  // namespace easyplan::api
