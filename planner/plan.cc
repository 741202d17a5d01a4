#include "planner/plan.h"

#include <algorithm>

#include "planner/lay_out_plan.h"
#include "planner/tree_matches.h"
#include "schemas/expression.h"

namespace easyplan::planner {

bool LayoutGroup::HeldBy(int64_t device) const {
  if (Staged() && !stages.On(StageOf(device))) return false;
  if (!expert_layout) return true;
  const Range held = expert_layout->SliceOf(device)[0];
  return expert >= held.first && expert < held.second;
}

int64_t LayoutGroup::BytesOn(int64_t device) const {
  if (!HeldBy(device)) return 0;
  return ByteSize(layout.ElementsOn(device), bits).value_or(0);
}

int64_t LayoutGroup::ReplicaIdOn(int64_t device, const Mesh& mesh) const {
  auto unstaged = [&](int64_t d) {
    if (!expert_layout) return layout.ReplicaId(d);
    const std::vector<int64_t> coords = mesh.Coordinates(d);
    int64_t id = 0;
    for (const auto& [axis, size] : replica_axes) id = id * size + coords[static_cast<size_t>(axis)];
    return id;
  };
  if (!Staged()) return unstaged(device);
  // The layout counts the pp axis as replication, one digit of the mixed-radix id; only the group's
  // stages hold it, so that digit becomes the stage's rank among them (the first 0, a second 1).
  const int64_t stage = StageOf(device);
  const int64_t base = device - stage * pp_stride;  // the same device on stage 0
  const int64_t id = unstaged(base);
  const int64_t weight = unstaged(base + pp_stride) - id;  // the pp digit's place value
  if (weight <= 0) return unstaged(device);
  const int64_t rank = stages.also >= 0 && stage == std::max(stages.stage, stages.also) ? 1 : 0;
  return (id / (weight * pp_size) * stages.Count() + rank) * weight + id % weight;
}

int64_t LayoutGroup::Replicas() const {
  if (Staged()) {
    // The layout counts the pp axis, which no spec names, as replication; only the group's stages hold it.
    const int64_t per_stage = layout.replicas() / std::max<int64_t>(1, pp_size);
    const int64_t tiles = expert_layout ? std::max<int64_t>(1, expert_layout->tiles()[0]) : 1;
    return per_stage / tiles * stages.Count();
  }
  if (!expert_layout) return layout.replicas();
  // The expert axes do not appear in the per-expert spec, so the layout counts them as replication;
  // only the devices of the expert's block hold it.
  const int64_t tiles = expert_layout->tiles()[0];
  return tiles > 0 ? layout.replicas() / tiles : layout.replicas();
}

int64_t LayoutGroup::MaxShardBytes() const {
  return ByteSize(layout.shard_shape().NumElements().value_or(0), bits).value_or(0);
}

bool LayoutGroup::Uniform() const { return !Staged() && UniformOnItsStages(); }

bool LayoutGroup::UniformOnItsStages() const {
  return layout.even() && !(expert_layout && expert_layout->tiles()[0] > 1);
}

int64_t Plan::StageOfDevice(int64_t device) const {
  if (!pipeline.pipelined()) return 0;
  const std::optional<int> pp = mesh.AxisIndex(std::string(kPipelineAxis));
  if (!pp) return 0;
  return device / mesh.Stride(*pp) % pipeline.stages;
}

std::vector<int64_t> Plan::StageBytes() const {
  std::vector<int64_t> out(static_cast<size_t>(pipeline.stages), 0);
  for (size_t d = 0; d < device_bytes.size(); ++d) {
    int64_t& most = out[static_cast<size_t>(StageOfDevice(static_cast<int64_t>(d)))];
    most = std::max(most, device_bytes[d]);
  }
  return out;
}

bool Plan::HasErrors() const {
  return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Severity::kError; });
}

StatusOr<PartitionSpec> ResolveRuleSpec(const rules::Rule& rule, const rules::Presets& presets, const Json& config,
                                        int* case_index, std::vector<std::string>* trace) {
  const rules::SpecSource* source = &rule.spec;
  if (case_index) *case_index = -1;
  for (size_t i = 0; i < rule.cases.size(); ++i) {
    auto holds = rule.cases[i].when.Evaluate(config);
    if (!holds.ok()) {
      return Status::BadInput(rule.loc, "rule '" + rule.pattern + "': case condition '" + rule.cases[i].when.text() +
                                            "': " + holds.status().diag().message);
    }
    if (schemas::IsTruthy(*holds)) {
      source = &rule.cases[i].spec;
      if (case_index) *case_index = static_cast<int>(i);
      if (trace) trace->push_back("case '" + rule.cases[i].when.text() + "' holds: spec " + source->text);
      break;
    }
  }
  auto spec = presets.Resolve(*source, config, Mode::kTrain, trace);
  if (!spec.ok()) {
    Status status = spec.status();
    Diag& diag = status.mutable_diag();
    diag.message = "rule '" + rule.pattern + "' spec " + source->text + ": " + diag.message;
    diag.loc = rule.loc;
    return status;
  }
  return spec;
}

StatusOr<Plan> BuildPlan(const PlanRequest& request) {
  if (!request.tree || !request.rules || !request.presets || !request.config) {
    return Status::Internal("BuildPlan: incomplete request");
  }
  // The mesh is checked first: a mesh too large for any plan is reported before the rules' problems.
  EP_RETURN_IF_ERROR(CheckMeshSize(request.mesh, request.max_devices));
  EP_ASSIGN_OR_RETURN(TreeMatches matches, MatchTree(MatchRequest{.tree = request.tree,
                                                                  .rules = request.rules,
                                                                  .presets = request.presets,
                                                                  .config = request.config,
                                                                  .links = &request.links,
                                                                  .logical_dims = request.logical_dims,
                                                                  .replay_outcomes = request.replay_outcomes}));
  return LayOutPlan(matches, request.mesh, request.uneven,
                    LayOutOptions{.max_devices = request.max_devices,
                                  .large_replicated_bytes = request.large_replicated_bytes,
                                  .keep_params = request.keep_params,
                                  .pipeline = request.pipeline,
                                  .pp_axis = request.pp_axis,
                                  .placements = request.placements});
}

std::string FusedMisalignedReason(const Plan& plan, const ParamPlan& param) {
  if (!param.fused_misaligned) return "";
  std::string why = "its fused dim's blocks straddle the parts it holds";
  for (const Finding& finding : plan.findings) {
    if (finding.code != FindingCode::kFusedMisaligned || finding.rule != param.rule) continue;
    // The finding names its first tensor; the reason is about this one: the part after "NAME: ".
    const size_t colon = finding.message.find(": ");
    why = colon == std::string::npos ? finding.message : finding.message.substr(colon + 2);
    break;
  }
  return "one rank would hold parts of two of what this tensor fuses (fused-misaligned: " + why + ")";
}

}  // namespace easyplan::planner
