#ifndef EASYPLAN_PLANNER_PLAN_H_
#define EASYPLAN_PLANNER_PLAN_H_

// A per-device shard plan: every tensor of a parameter tree matched against ordered partition rules
// (eformer match_partition_rules), its spec resolved through the config's partition_axis, corrected
// for its shape (layout.h) and laid on the mesh. Tensors that share (shape, effective spec, dtype, expert
// placement) share one TensorLayout, so per-device totals cost O(groups), plus O(devices) per group
// whose devices differ (uneven chunks, per-expert tensors), never O(tensors x devices).
//
// BuildPlan is two stages: MatchTree (tree_matches.h) does everything the mesh does not change (rule
// specs, matching, the tensor "kinds": number shape of the name, shape, dtype, link) once, and
// LayOutPlan (lay_out_plan.h) corrects, groups and checks each kind on one mesh. Planning one model
// on many meshes calls MatchTree once and LayOutPlan per mesh.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/mesh.h"
#include "core/param_tree.h"
#include "core/partition_spec.h"
#include "core/status.h"
#include "planner/findings.h"
#include "planner/layout.h"
#include "planner/pipeline.h"
#include "rules/logical_dims.h"
#include "rules/matcher.h"
#include "rules/presets.h"
#include "rules/rule_set.h"

namespace easyplan::planner {

/// How a tensor of the plan's tree is seen by rules written for the other layout: the name the rules
/// match, that tensor's shape, and where each of this tensor's dims comes from. A per-expert HF tensor
/// is one slice of a stacked EasyDeL kernel: `expert` is its index along `expert_dim` of the rule shape.
struct LayoutLink {
  bool has_counterpart = true;  ///< false: the tensor exists only in this layout (FP8 scales, MTP, buffers)
  std::string rule_name;
  Shape rule_shape;
  std::vector<int> dim_of;  ///< this tensor's dim k is dim dim_of[k] of rule_shape
  int expert_dim = -1;
  int64_t expert = -1;
};

/// The pipeline stages a tensor lives on (planner/pipeline.h): every stage when there is no pipeline,
/// one stage, or two (a tied embedding serves as the first stage's lookup and the last stage's head,
/// and each keeps a copy, as Megatron-LM does).
struct StagePlacement {
  int64_t stage = -1;  ///< -1: every stage
  int64_t also = -1;   ///< a second stage, or -1
  bool Everywhere() const { return stage < 0; }
  bool On(int64_t s) const { return stage < 0 || s == stage || s == also; }
  int64_t Count() const { return stage < 0 ? 0 : (also >= 0 ? 2 : 1); }
  auto operator<=>(const StagePlacement&) const = default;
};

struct PlanRequest {
  const ParamTree* tree = nullptr;
  const rules::RuleSet* rules = nullptr;
  const rules::Presets* presets = nullptr;
  const Json* config = nullptr;  ///< resolved config: partition_axis and the MoE flags
  Mesh mesh;
  UnevenMode uneven = UnevenMode::kReplicate;
  /// One per tree tensor when the rules are written for the other layout; empty otherwise.
  std::vector<LayoutLink> links;
  /// Which dims count heads / experts / vocabulary (validate's logical-indivisible check); optional.
  const rules::LogicalDims* logical_dims = nullptr;
  int64_t max_devices = int64_t{1} << 22;
  /// A fully replicated tensor at least this large is a warning when some mesh axis could shard it.
  int64_t large_replicated_bytes = int64_t{64} << 20;
  /// Tensors that differ only in their layer and expert numbers (and share shape, dtype and link)
  /// replay the first one's result instead of being planned again. Off only in tests, which check
  /// that it changes nothing.
  bool replay_outcomes = true;
  /// False: Plan::params stays empty. Everything else (groups, per-device totals, rule counts,
  /// findings) is built as usual; validate and `plan --summary` need nothing more, and a 92k-tensor
  /// tree's plan entries are 7 MiB to write.
  bool keep_params = true;
  /// A pipelined mesh: the split, the mesh's pp axis and each tree tensor's stages (LayOutOptions).
  PipelineSplit pipeline;
  int pp_axis = -1;
  std::vector<StagePlacement> placements;
};

/// How a tensor got its spec.
enum class SpecOrigin {
  kRule,           ///< a rule matched
  kScalar,         ///< rank 0 (or no shape): P() before any rule, as eformer does
  kUnmatched,      ///< no rule matched: an error; laid out replicated so totals stay meaningful
  kNoCounterpart,  ///< only in this layout, rules are for the other one: replicated, a warning
};

struct ParamPlan {
  int tensor = 0;  ///< index into tree->tensors
  SpecOrigin origin = SpecOrigin::kRule;
  int rule = -1;            ///< index into rules->rules when origin == kRule
  int rule_case = -1;       ///< which `cases` entry applied, -1 = the rule's own spec
  PartitionSpec spec;       ///< resolved to mesh axes, on this tensor's dims, before correction
  PartitionSpec effective;  ///< after CorrectSpec, on this tensor's dims
  std::vector<SpecIssue> issues;
  int group = 0;  ///< index into Plan::groups
  /// A fused dim (rules/_logical_dims.yaml `fused`) whose blocks straddle its parts: the torch and
  /// transformers exports refuse the tensor (the plan's fused-misaligned finding says why).
  bool fused_misaligned = false;
};

/// Tensors that are laid out identically.
struct LayoutGroup {
  TensorLayout layout;
  int bits = 0;  ///< dtype bits per element
  /// For per-expert tensors: the 1-D layout of the stacked expert dim; the tensor lives only on the
  /// devices whose slice of it holds `expert`.
  std::optional<TensorLayout> expert_layout;
  int64_t expert = -1;
  /// For per-expert tensors: the mesh axes over which the expert's block is replicated (mesh order,
  /// neither in the tensor's spec nor in the expert entry), with their sizes.
  std::vector<std::pair<int, int64_t>> replica_axes;
  int64_t tensors = 0;
  /// On a pipelined mesh: the stages that hold the group's tensors, and where the pp axis sits in the
  /// mesh (a device's stage is its pp coordinate, device / pp_stride % pp_size).
  StagePlacement stages;
  int64_t pp_stride = 1, pp_size = 1;

  /// The pipeline stage of `device` (0 without a pipeline).
  int64_t StageOf(int64_t device) const { return device / pp_stride % pp_size; }
  /// True when the group lives on some stages only (Uniform is then false: other stages hold none of it).
  bool Staged() const { return !stages.Everywhere(); }
  /// False when the tensor is an expert that `device` does not hold, or belongs to another stage.
  bool HeldBy(int64_t device) const;
  /// Bytes one tensor of the group occupies on `device`.
  int64_t BytesOn(int64_t device) const;
  /// Number of earlier devices (mesh-flat order) holding the same slice of the same tensor; for a
  /// per-expert tensor only the devices holding that expert count.
  int64_t ReplicaIdOn(int64_t device, const Mesh& mesh) const;
  /// Replicas of each block (devices holding the same slice).
  int64_t Replicas() const;
  /// Bytes of the largest shard (what `plan` reports as bytes per device).
  int64_t MaxShardBytes() const;
  /// True when every device holds the same number of bytes of each tensor.
  bool Uniform() const;
  /// True when every device of a stage that holds the group holds the same bytes (Uniform but for the
  /// stages): per-stage totals then need one device per stage.
  bool UniformOnItsStages() const;
};

struct Plan {
  Mesh mesh;
  /// The pipeline the pp axis runs (stages 1 when the mesh has none); each tensor's stages are its
  /// group's `stages`.
  PipelineSplit pipeline;
  UnevenMode uneven = UnevenMode::kReplicate;
  std::vector<ParamPlan> params;  ///< one per tree tensor, in tree order; empty without keep_params
  std::vector<LayoutGroup> groups;
  std::vector<int64_t> device_bytes;  ///< one per device
  std::vector<Finding> findings;      ///< sorted: errors first, then by rule / tensor order
  /// Per rule: how many tensors it took (first match) and how many it matched in all.
  std::vector<int64_t> rule_hits;
  std::vector<int64_t> rule_matches;

  bool HasErrors() const;
  /// The pipeline stage `device` belongs to: its pp coordinate (0 without a pipeline).
  int64_t StageOfDevice(int64_t device) const;
  /// Per pipeline stage, the most bytes one of its devices holds (one entry without a pipeline).
  std::vector<int64_t> StageBytes() const;
};

/// The spec `rule` gives under `config` (its first holding case, else its own), resolved to mesh axes.
/// `case_index` receives the case used (-1 = none); `trace` the resolution steps, for explain.
StatusOr<PartitionSpec> ResolveRuleSpec(const rules::Rule& rule, const rules::Presets& presets, const Json& config,
                                        int* case_index, std::vector<std::string>* trace);

/// Builds the plan: MatchTree, then LayOutPlan on request.mesh. Errors that make a plan meaningless for any tensor (a
/// spec that cannot be resolved, a mesh above max_devices, a size overflow) are returned as a Status; problems of
/// single tensors and rules (unmatched, unknown axis, indivisible, truncated, dead rules, ...) become findings.
StatusOr<Plan> BuildPlan(const PlanRequest& request);

/// Why an export that gives each rank one contiguous block (torch DTensor, transformers' tp_plan) refuses
/// `param`, a fused projection whose blocks straddle its parts (ParamPlan::fused_misaligned): the plan's
/// fused-misaligned finding for its rule. "" when the parameter is not such a tensor.
std::string FusedMisalignedReason(const Plan& plan, const ParamPlan& param);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_PLAN_H_
