#include "planner/findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "core/enum_table.h"

namespace easyplan::planner {

namespace {

// The stable identifiers of docs/RULES.md.
constexpr EnumName<FindingCode> kFindingCodeNames[] = {
    {FindingCode::kUnmatchedTensor, "unmatched-tensor"},
    {FindingCode::kUnknownAxis, "unknown-axis"},
    {FindingCode::kDuplicateAxis, "duplicate-axis"},
    {FindingCode::kIndivisible, "indivisible"},
    {FindingCode::kOverBudget, "over-budget"},
    {FindingCode::kLogicalIndivisible, "logical-indivisible"},
    {FindingCode::kTruncatedSpec, "truncated-spec"},
    {FindingCode::kUnevenReplaced, "uneven-replicated"},
    {FindingCode::kUnevenChunked, "uneven-chunked"},
    {FindingCode::kDeadRule, "dead-rule"},
    {FindingCode::kShadowedRule, "shadowed-rule"},
    {FindingCode::kLargeReplicated, "large-replicated"},
    {FindingCode::kNoCounterpart, "no-counterpart"},
    {FindingCode::kExpertMesh, "expert-mesh"},
    {FindingCode::kCacheReshard, "cache-reshard"},
    {FindingCode::kRedundantCompute, "redundant-compute"},
    {FindingCode::kVocabReplicated, "vocab-replicated"},
    {FindingCode::kFusedMisaligned, "fused-misaligned"},
    {FindingCode::kPipelineMicrobatches, "pipeline-microbatches"},
    {FindingCode::kPipelineImbalance, "pipeline-imbalance"},
    {FindingCode::kContextLength, "context-length"},
    {FindingCode::kFitsNoDevice, "fits-no-device"},
};

}  // namespace

std::string_view FindingCodeName(FindingCode code) { return NameOf(kFindingCodeNames, code); }

Severity FindingSeverity(FindingCode code) {
  switch (code) {
    case FindingCode::kUnmatchedTensor:
    case FindingCode::kUnknownAxis:
    case FindingCode::kDuplicateAxis:
    case FindingCode::kIndivisible:
    case FindingCode::kOverBudget:
    case FindingCode::kLogicalIndivisible:
    case FindingCode::kExpertMesh:
    case FindingCode::kPipelineMicrobatches:
    case FindingCode::kContextLength:
    case FindingCode::kFitsNoDevice:
      return Severity::kError;
    case FindingCode::kUnevenChunked:
      return Severity::kNote;
    default:
      return Severity::kWarning;
  }
}

bool FindingList::KeyedByTensor(const Finding& finding) {
  return finding.rule < 0 && !finding.tensor.empty() && finding.code != FindingCode::kUnmatchedTensor &&
         finding.code != FindingCode::kNoCounterpart;
}

size_t FindingList::Add(Finding finding, int dim, std::string_view axis) {
  // An axis the mesh lacks is one finding, whichever rules and dims use it: the fix is one (size the
  // axis in --mesh, or change the rules), so the other rules that use it are listed in its notes.
  const bool by_axis = finding.code == FindingCode::kUnknownAxis && !axis.empty();
  std::string key = by_axis ? std::string(FindingCodeName(finding.code)) + "\x1f" + std::string(axis)
                            : std::string(FindingCodeName(finding.code)) + "\x1f" + std::to_string(finding.rule) +
                                  "\x1f" + std::to_string(dim) + "\x1f" + std::string(axis);
  if (KeyedByTensor(finding)) {
    key += "\x1f" + finding.tensor;  // without a rule, only identical tensors aggregate
  }
  const auto [it, inserted] = index_.try_emplace(std::move(key), findings_.size());
  if (!inserted) {
    Finding& first = findings_[it->second];
    first.count += finding.count;
    if (by_axis && finding.rule != first.rule) {
      const std::string note = fmt::format("rule {} ({}) also uses '{}'", finding.rule, finding.loc.ToString(), axis);
      if (std::find(first.notes.begin(), first.notes.end(), note) == first.notes.end()) first.notes.push_back(note);
    }
    return it->second;
  }
  finding.severity = FindingSeverity(finding.code);
  findings_.push_back(std::move(finding));
  return findings_.size() - 1;
}

std::vector<Finding> FindingList::Take() {
  std::stable_sort(findings_.begin(), findings_.end(), [](const Finding& a, const Finding& b) {
    return static_cast<int>(a.severity) > static_cast<int>(b.severity);
  });
  index_.clear();
  return std::move(findings_);
}

}  // namespace easyplan::planner
