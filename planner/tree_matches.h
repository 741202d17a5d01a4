#ifndef EASYPLAN_PLANNER_TREE_MATCHES_H_
#define EASYPLAN_PLANNER_TREE_MATCHES_H_

// The mesh-free half of planning (BuildPlan = MatchTree, then LayOutPlan per mesh): every rule's spec
// resolved through the config, and every tensor of the tree matched against the rules. Nothing here
// depends on the mesh, so a search that plans one model on thousands of meshes matches it once.
//
// Tensors that nothing in a plan can tell apart share one "kind": the number shape of the name the
// rules see (rules/match_memo.h), the tensor's shape and dtype width, and its layout link. A
// 92k-tensor checkpoint has a few hundred kinds; LayOutPlan corrects, groups and checks each kind
// once per mesh and replays the result for the kind's other tensors.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/param_tree.h"
#include "core/partition_spec.h"
#include "core/status.h"
#include "planner/findings.h"
#include "planner/plan.h"
#include "rules/logical_dims.h"
#include "rules/presets.h"
#include "rules/rule_set.h"

namespace easyplan::planner {

struct MatchRequest {
  const ParamTree* tree = nullptr;
  const rules::RuleSet* rules = nullptr;
  const rules::Presets* presets = nullptr;
  const Json* config = nullptr;  ///< resolved config: partition_axis, the MoE flags, logical counts
  /// One per tree tensor when the rules are written for the other layout; null or empty otherwise.
  const std::vector<LayoutLink>* links = nullptr;
  /// Which dims count heads / experts / vocabulary (LayOutPlan's logical-indivisible check); optional.
  const rules::LogicalDims* logical_dims = nullptr;
  /// False: every tensor is a kind of its own (tests check that merging tensors changes nothing).
  bool replay_outcomes = true;
};

/// What the rules say about every tensor of one kind.
struct TensorKind {
  int first_tensor = 0;  ///< the kind's first tensor in tree order: the one its findings name
  int64_t tensors = 0;   ///< tensors of the tree with this kind
  SpecOrigin origin = SpecOrigin::kRule;
  int rule = -1;            ///< the first matching rule when origin == kRule
  int rule_case = -1;       ///< which `cases` entry of that rule applied, -1 = the rule's own spec
  PartitionSpec rule_spec;  ///< resolved, on the rule tensor's dims (P() without a rule)
  PartitionSpec spec;       ///< the same on this tensor's dims (ParamPlan::spec)
  /// Index into TreeMatches::corrections(): CorrectSpec runs once per (rule, rule shape) and mesh.
  int correction = 0;
  /// Index of the kind's (correction, shape, dtype width, link dims, expert): kinds of one slot land
  /// in the same layout group on every mesh.
  int group_slot = 0;
  /// Range of TreeMatches' match lists: every rule the name matches (MatchesOf).
  uint32_t matches_begin = 0, matches_end = 0;
};

/// A (rule, rule-layout shape) pair: what eformer's correction of a spec depends on besides the mesh.
struct CorrectionSlot {
  int rule = -1;  ///< -1: no rule (scalar, unmatched, no counterpart): P() is corrected
  Shape rule_shape;
};

/// The result of MatchTree. Immutable: every accessor is const and nothing is computed lazily, so one
/// TreeMatches may be used by LayOutPlan on many threads at once. It points into the MatchRequest's
/// tree, rules, config, links and logical dims, which must outlive it.
class TreeMatches {
 public:
  const ParamTree& tree() const { return *tree_; }
  const rules::RuleSet& rules() const { return *rules_; }
  const Json& config() const { return *config_; }
  const rules::LogicalDims* logical_dims() const { return logical_dims_; }
  /// The tensor's layout link, or null when the rules are written for the tree's own layout.
  const LayoutLink* LinkOf(size_t tensor) const { return links_ ? &(*links_)[tensor] : nullptr; }

  /// Per rule: its spec resolved through the config, and the case that gave it (-1 = none).
  const std::vector<PartitionSpec>& rule_specs() const { return rule_specs_; }
  const std::vector<int>& rule_cases() const { return rule_cases_; }

  const std::vector<TensorKind>& kinds() const { return kinds_; }
  const TensorKind& KindOf(size_t tensor) const { return kinds_[kind_of_[tensor]]; }
  int KindIndexOf(size_t tensor) const { return static_cast<int>(kind_of_[tensor]); }
  /// Every rule the kind's name matches, ascending (empty for scalars and tensors without counterpart).
  std::span<const int> MatchesOf(const TensorKind& kind) const {
    return std::span<const int>(match_lists_).subspan(kind.matches_begin, kind.matches_end - kind.matches_begin);
  }
  const std::vector<CorrectionSlot>& corrections() const { return corrections_; }
  int group_slots() const { return group_slots_; }

  /// Per rule: how many tensors it took (first match) and how many it matched in all.
  const std::vector<int64_t>& rule_hits() const { return rule_hits_; }
  const std::vector<int64_t>& rule_matches() const { return rule_matches_; }
  /// Dead and shadowed rules, in rule order: a plan lists them after its tensors' findings.
  const std::vector<Finding>& rule_findings() const { return rule_findings_; }

 private:
  friend StatusOr<TreeMatches> MatchTree(const MatchRequest& request);
  friend class TreeMatcher;

  const ParamTree* tree_ = nullptr;
  const rules::RuleSet* rules_ = nullptr;
  const Json* config_ = nullptr;
  const std::vector<LayoutLink>* links_ = nullptr;
  const rules::LogicalDims* logical_dims_ = nullptr;
  std::vector<PartitionSpec> rule_specs_;
  std::vector<int> rule_cases_;
  std::vector<TensorKind> kinds_;
  std::vector<uint32_t> kind_of_;  // per tensor
  std::vector<int> match_lists_;
  std::vector<CorrectionSlot> corrections_;
  int group_slots_ = 0;
  std::vector<int64_t> rule_hits_, rule_matches_;
  std::vector<Finding> rule_findings_;
};

/// Resolves every rule's spec and matches every tensor. Errors: a spec that cannot be resolved (at
/// its rule's line), an RE2::Set that cannot be built, an incomplete request.
StatusOr<TreeMatches> MatchTree(const MatchRequest& request);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_TREE_MATCHES_H_
