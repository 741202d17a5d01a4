#include "planner/tree_matches.h"

#include <fmt/format.h>

#include <memory>
#include <string_view>

#include "core/fast_hash.h"
#include "planner/layout_links.h"
#include "rules/match_memo.h"
#include "rules/matcher.h"

namespace easyplan::planner {

// Outside the anonymous namespace: TreeMatcher, the friend tree_matches.h declares, has external linkage
// and holds DenseIdIndex members, which a type without linkage may not be (GCC's -Wsubobject-linkage, which
// fires once this file is compiled inside a unity batch).
namespace tree_matches_internal {

/// An insert-only hash index from typed keys to dense ids 0, 1, ...: the caller keeps each id's key
/// and says whether a stored id's key equals the one looked up. One hash per lookup, open addressing
/// over 32-bit slots, no node per key (this runs once per tensor of a 92k-tensor tree).
class DenseIdIndex {
 public:
  /// The id whose key `equals` accepts, or a new id (== size() before the call) with `*added` set.
  template <typename Equals>
  int FindOrAdd(uint64_t hash, const Equals& equals, bool* added) {
    if ((hashes_.size() + 1) * 2 > slots_.size()) Grow();
    const size_t mask = slots_.size() - 1;
    size_t s = hash & mask;
    for (; slots_[s] != 0; s = (s + 1) & mask) {
      const int id = static_cast<int>(slots_[s] - 1);
      if (hashes_[static_cast<size_t>(id)] == hash && equals(id)) {
        *added = false;
        return id;
      }
    }
    hashes_.push_back(hash);
    slots_[s] = static_cast<uint32_t>(hashes_.size());
    *added = true;
    return static_cast<int>(hashes_.size() - 1);
  }

 private:
  void Grow() {
    slots_.assign(slots_.empty() ? 64 : slots_.size() * 2, 0);
    const size_t mask = slots_.size() - 1;
    for (size_t id = 0; id < hashes_.size(); ++id) {
      size_t s = hashes_[id] & mask;
      while (slots_[s] != 0) s = (s + 1) & mask;
      slots_[s] = static_cast<uint32_t>(id + 1);
    }
  }

  std::vector<uint64_t> hashes_;  // by id
  std::vector<uint32_t> slots_;   // 1 + id; 0 = empty
};

}  // namespace tree_matches_internal

using tree_matches_internal::DenseIdIndex;

namespace {

template <typename T>
std::string_view BytesOf(std::span<const T> values) {
  return {reinterpret_cast<const char*>(values.data()), values.size_bytes()};
}

bool SameLink(const LayoutLink* a, const LayoutLink* b) {
  if (!a || !b) return a == b;
  return a->has_counterpart == b->has_counterpart && a->rule_shape == b->rule_shape && a->dim_of == b->dim_of &&
         a->expert_dim == b->expert_dim && a->expert == b->expert;
}

/// Hash of what a tensor's plan depends on besides its name: shape, dtype width and layout link.
uint64_t HashTensorFields(const TensorEntry& tensor, int bits, const LayoutLink* link) {
  uint64_t hash = HashBytes(BytesOf(tensor.shape.dims()), static_cast<uint64_t>(bits));
  if (link) {
    hash = HashBytes(BytesOf(link->rule_shape.dims()), hash ^ (link->has_counterpart ? 0x5bd1e995u : 0x27d4eb2du));
    hash = HashBytes(
        BytesOf(std::span<const int>(link->dim_of)),
        hash + static_cast<uint64_t>(link->expert) * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(link->expert_dim));
  }
  return hash;
}

/// Rules that take nothing: dead when they match nothing at all, shadowed when earlier rules took
/// every tensor they match.
std::vector<Finding> RuleUseFindings(const rules::RuleSet& rule_set, const std::vector<int64_t>& hits,
                                     const std::vector<int64_t>& matches) {
  std::vector<Finding> findings;
  for (size_t r = 0; r < rule_set.rules.size(); ++r) {
    if (hits[r] > 0) continue;
    const rules::Rule& rule = rule_set.rules[r];
    // A final catch-all exists to be shadowed; flagging it would only be noise.
    if (rule.pattern == ".*" && r + 1 == rule_set.rules.size() && matches[r] > 0) continue;
    if (matches[r] == 0) {
      findings.push_back(Finding{.code = FindingCode::kDeadRule,
                                 .message = fmt::format("rule {} '{}' matches no tensor of this tree", r, rule.pattern),
                                 .rule = static_cast<int>(r),
                                 .loc = rule.loc});
    } else {
      findings.push_back(Finding{
          .code = FindingCode::kShadowedRule,
          .message = fmt::format("rule {} '{}' matches {} tensor{}, but earlier rules take {}", r, rule.pattern,
                                 matches[r], matches[r] == 1 ? "" : "s", matches[r] == 1 ? "it" : "all of them"),
          .rule = static_cast<int>(r),
          .loc = rule.loc});
    }
  }
  return findings;
}

}  // namespace

/// Builds one TreeMatches: the steps of MatchTree, sharing their indexes.
class TreeMatcher {
 public:
  TreeMatcher(const MatchRequest& request, TreeMatches* out) : request_(request), out_(*out) {}

  /// Each rule's spec resolves once: it depends on the rule and the config, never on the tensor.
  Status ResolveRuleSpecs() {
    for (const rules::Rule& rule : out_.rules_->rules) {
      int chosen = -1;
      EP_ASSIGN_OR_RETURN(PartitionSpec spec,
                          ResolveRuleSpec(rule, *request_.presets, *out_.config_, &chosen, nullptr));
      out_.rule_specs_.push_back(std::move(spec));
      out_.rule_cases_.push_back(chosen);
    }
    return Status();
  }

  /// Sorts every tensor into its kind, matching each new kind's name against the rules.
  Status MatchTensors() {
    EP_ASSIGN_OR_RETURN(matcher_, rules::RuleMatcher::Build(*out_.rules_));
    // Layers and experts repeat a few dozen names with different numbers: match each digit shape once.
    memo_ = std::make_unique<rules::MatchMemo>(*matcher_, *out_.rules_);
    // Tensors merge into kinds only when names can be reduced to number shapes.
    const bool merge = request_.replay_outcomes && memo_->number_blind() &&
                       (out_.logical_dims_ == nullptr || out_.logical_dims_->number_blind());
    const ParamTree& tree = *out_.tree_;
    out_.kind_of_.resize(tree.tensors.size());
    std::string name_shape;  // reused: no allocation per tensor once it has grown
    for (size_t t = 0; t < tree.tensors.size(); ++t) {
      const TensorEntry& tensor = tree.tensors[t];
      const LayoutLink* link = out_.LinkOf(t);
      const int bits = DTypeBits(tensor.dtype);
      int kind = static_cast<int>(out_.kinds_.size());
      bool added = true;
      if (merge) {
        rules::NumberShapeInto(MatchName(tensor, link), &name_shape);
        const uint64_t hash = HashBytes(name_shape, HashTensorFields(tensor, bits, link));
        kind = kind_index_.FindOrAdd(
            hash,
            [&](int k) {
              const int first = out_.kinds_[static_cast<size_t>(k)].first_tensor;
              const TensorEntry& other = tree.tensors[static_cast<size_t>(first)];
              return kind_names_[static_cast<size_t>(k)] == name_shape && other.shape == tensor.shape &&
                     DTypeBits(other.dtype) == bits && SameLink(out_.LinkOf(static_cast<size_t>(first)), link);
            },
            &added);
        if (added) kind_names_.push_back(name_shape);
      }
      if (added) AddKind(t);
      out_.kind_of_[t] = static_cast<uint32_t>(kind);
      ++out_.kinds_[static_cast<size_t>(kind)].tensors;
    }
    return Status();
  }

  /// Rule use counts and the dead / shadowed rules they reveal.
  void CountRuleUse() {
    const size_t rules = out_.rules_->rules.size();
    out_.rule_hits_.assign(rules, 0);
    out_.rule_matches_.assign(rules, 0);
    for (const TensorKind& kind : out_.kinds_) {
      for (int r : out_.MatchesOf(kind)) out_.rule_matches_[static_cast<size_t>(r)] += kind.tensors;
      if (kind.origin == SpecOrigin::kRule) out_.rule_hits_[static_cast<size_t>(kind.rule)] += kind.tensors;
    }
    out_.rule_findings_ = RuleUseFindings(*out_.rules_, out_.rule_hits_, out_.rule_matches_);
  }

 private:
  struct GroupSlotKey {
    int correction;
    const TensorEntry* tensor;
    int bits;
    const LayoutLink* link;
  };

  static std::string_view MatchName(const TensorEntry& tensor, const LayoutLink* link) {
    return link ? std::string_view(link->rule_name) : std::string_view(tensor.name);
  }

  /// A new kind whose first tensor is `t`: its origin, matches, rule, specs and slots.
  void AddKind(size_t t) {
    const TensorEntry& tensor = out_.tree_->tensors[t];
    const LayoutLink* link = out_.LinkOf(t);
    const Shape& rule_shape = link ? link->rule_shape : tensor.shape;
    TensorKind kind;
    kind.first_tensor = static_cast<int>(t);
    kind.matches_begin = kind.matches_end = static_cast<uint32_t>(out_.match_lists_.size());
    if (link && !link->has_counterpart) {
      kind.origin = SpecOrigin::kNoCounterpart;
    } else if (rule_shape.rank() == 0) {
      kind.origin = SpecOrigin::kScalar;  // eformer: scalars get P() before any rule is tried
    } else {
      const std::vector<int>& matches = memo_->AllMatches(MatchName(tensor, link));
      out_.match_lists_.insert(out_.match_lists_.end(), matches.begin(), matches.end());
      kind.matches_end = static_cast<uint32_t>(out_.match_lists_.size());
      if (matches.empty()) {
        kind.origin = SpecOrigin::kUnmatched;
      } else {
        kind.origin = SpecOrigin::kRule;
        kind.rule = matches.front();
        kind.rule_case = out_.rule_cases_[static_cast<size_t>(kind.rule)];
        kind.rule_spec = out_.rule_specs_[static_cast<size_t>(kind.rule)];
      }
    }
    kind.spec = link && link->has_counterpart ? MapSpecThroughLink(kind.rule_spec, link->dim_of) : kind.rule_spec;
    kind.correction = CorrectionSlotOf(kind.rule, rule_shape);
    kind.group_slot = GroupSlotOf(kind.correction, tensor, link);
    out_.kinds_.push_back(std::move(kind));
  }

  /// The correction depends only on (rule, rule shape): thousands of layers share a handful.
  int CorrectionSlotOf(int rule, const Shape& rule_shape) {
    const uint64_t hash = HashBytes(BytesOf(rule_shape.dims()), static_cast<uint64_t>(rule) + 1);
    bool added = false;
    const int slot = correction_index_.FindOrAdd(
        hash,
        [&](int s) {
          const CorrectionSlot& other = out_.corrections_[static_cast<size_t>(s)];
          return other.rule == rule && other.rule_shape == rule_shape;
        },
        &added);
    if (added) out_.corrections_.push_back(CorrectionSlot{rule, rule_shape});
    return slot;
  }

  /// Tensors of one (correction, shape, dtype width, dim map, expert) are laid out identically.
  int GroupSlotOf(int correction, const TensorEntry& tensor, const LayoutLink* link) {
    const GroupSlotKey key{correction, &tensor, DTypeBits(tensor.dtype), link};
    uint64_t hash = HashBytes(BytesOf(tensor.shape.dims()), static_cast<uint64_t>(correction) * 31 + key.bits);
    if (link) {
      hash = HashBytes(BytesOf(std::span<const int>(link->dim_of)),
                       hash ^ (static_cast<uint64_t>(link->expert) * 0x9E3779B97F4A7C15ULL + link->has_counterpart));
    }
    bool added = false;
    const int slot = group_index_.FindOrAdd(
        hash,
        [&](int s) {
          const GroupSlotKey& other = group_keys_[static_cast<size_t>(s)];
          return other.correction == key.correction && other.bits == key.bits &&
                 other.tensor->shape == key.tensor->shape && SameGroupLink(other.link, key.link);
        },
        &added);
    if (added) {
      group_keys_.push_back(key);
      out_.group_slots_ = static_cast<int>(group_keys_.size());
    }
    return slot;
  }

  // The link fields a group depends on beyond the correction (which holds the rule shape).
  static bool SameGroupLink(const LayoutLink* a, const LayoutLink* b) {
    if (!a || !b) return a == b;
    return a->has_counterpart == b->has_counterpart && a->dim_of == b->dim_of && a->expert_dim == b->expert_dim &&
           a->expert == b->expert;
  }

  const MatchRequest& request_;
  TreeMatches& out_;
  std::unique_ptr<rules::RuleMatcher> matcher_;
  std::unique_ptr<rules::MatchMemo> memo_;
  DenseIdIndex kind_index_, correction_index_, group_index_;
  std::vector<std::string> kind_names_;   // the number shape of each kind's name (when kinds merge)
  std::vector<GroupSlotKey> group_keys_;  // by group slot
};

StatusOr<TreeMatches> MatchTree(const MatchRequest& request) {
  if (!request.tree || !request.rules || !request.presets || !request.config) {
    return Status::Internal("MatchTree: incomplete request");
  }
  const bool has_links = request.links && !request.links->empty();
  if (has_links && request.links->size() != request.tree->tensors.size()) {
    return Status::Internal("MatchTree: one layout link per tensor expected");
  }
  TreeMatches matches;
  matches.tree_ = request.tree;
  matches.rules_ = request.rules;
  matches.config_ = request.config;
  matches.links_ = has_links ? request.links : nullptr;
  matches.logical_dims_ = request.logical_dims;
  TreeMatcher matcher(request, &matches);
  EP_RETURN_IF_ERROR(matcher.ResolveRuleSpecs());
  EP_RETURN_IF_ERROR(matcher.MatchTensors());
  matcher.CountRuleUse();
  return matches;
}

}  // namespace easyplan::planner
