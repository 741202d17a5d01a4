#ifndef EASYPLAN_PLANNER_FINDINGS_H_
#define EASYPLAN_PLANNER_FINDINGS_H_

// What `plan` and `validate` report about a plan: one finding per problem, aggregated over the
// tensors that share it (a truncated spec on 61 layers is one finding with a count, not 61 lines).

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"

namespace easyplan::planner {

/// Every finding kind, with its fixed severity (docs/RULES.md lists them with examples).
enum class FindingCode {
  kUnmatchedTensor,       ///< error: no rule matched (eformer: "Partition rule not found for param")
  kUnknownAxis,           ///< error: a spec names an axis the mesh lacks
  kDuplicateAxis,         ///< error: a spec uses one mesh axis twice
  kIndivisible,           ///< error under --uneven error: JAX's IndivisibleError
  kOverBudget,            ///< error: a device's bytes exceed --max-memory
  kLogicalIndivisible,    ///< error: heads / kv heads / experts / vocab not divisible by their axes
  kTruncatedSpec,         ///< warning: more spec entries than the tensor's rank
  kUnevenReplaced,        ///< warning under --uneven replicate: a dim's entry dropped to None
  kUnevenChunked,         ///< note under --uneven chunk: shards of different sizes
  kDeadRule,              ///< warning: the rule matches no tensor
  kShadowedRule,          ///< warning: every tensor the rule matches was taken by an earlier rule
  kLargeReplicated,       ///< warning: a large tensor is fully replicated although an axis could shard it
  kNoCounterpart,         ///< warning: a tensor of this layout has no counterpart in the rules' layout
  kExpertMesh,            ///< error: EasyDeL cannot fold the mesh into its (dp, ep, tp) expert mesh, or the
                          ///< experts do not split evenly over it (activations, validate --mode)
  kCacheReshard,          ///< warning: decode steps constrain the KV cache differently from how it is stored
  kRedundantCompute,      ///< warning: an axis shards neither the batch nor a module's weights (computed whole)
  kVocabReplicated,       ///< warning: a vocabulary its axes do not divide, replicated (EasyDeL runs it so)
  kFusedMisaligned,       ///< warning: a fused dim's blocks straddle its parts (q|k|v): resharded after the split
  kPipelineMicrobatches,  ///< error: too few microbatches for the pipeline schedule (docs/PIPELINE.md)
  kPipelineImbalance,     ///< warning: a pipeline stage with more than 10% more work than the mean
  kContextLength,         ///< error: --seq (or --max-length) past the positions the model was trained for
  kFitsNoDevice,          ///< error: validate without a budget: no bundled accelerator holds the plan
};

/// "unmatched-tensor", "unknown-axis", ...: stable identifiers for JSON, JUnit and `--strict` lists.
std::string_view FindingCodeName(FindingCode code);
Severity FindingSeverity(FindingCode code);

struct Finding {
  FindingCode code;
  Severity severity = Severity::kError;
  std::string message;             ///< one sentence naming the tensor (the first one) and the numbers
  std::string tensor;              ///< first tensor concerned; "" for rule-level findings
  int64_t count = 0;               ///< tensors concerned (0 for rule-level findings)
  int rule = -1;                   ///< index of the rule concerned, -1 = none
  SourceLoc loc;                   ///< the rule's file:line, when a rule is concerned
  std::vector<std::string> notes;  ///< hints: valid sizes, did-you-mean, what to change
};

/// Keeps findings aggregated: Add() with the same key (code, rule, dim, axis) counts the tensor into
/// the existing finding instead of adding a line. An unknown axis is keyed by the axis alone: one
/// finding per missing axis, its notes naming the other rules that use it.
class FindingList {
 public:
  /// Returns the finding's position, which Recount takes (valid until Take).
  size_t Add(Finding finding, int dim = -1, std::string_view axis = {});
  /// Counts `count` more tensors into the finding at `position`: what Add of an equal key does, without
  /// building the finding again.
  void Recount(size_t position, int64_t count) { findings_[position].count += count; }
  /// True when the finding's key includes its tensor's name (no rule to aggregate by), so another
  /// tensor with the same problem gets a finding of its own.
  static bool KeyedByTensor(const Finding& finding);
  /// Sorted: errors, warnings, notes; within a severity, in the order they were first added.
  std::vector<Finding> Take();

 private:
  std::vector<Finding> findings_;
  std::unordered_map<std::string, size_t> index_;  // key -> position in findings_
};

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_FINDINGS_H_
