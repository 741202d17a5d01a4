#ifndef EASYPLAN_RULES_MATCH_MEMO_H_
#define EASYPLAN_RULES_MATCH_MEMO_H_

// Memoized rule matching for trees of repeated blocks. A model's 92k tensor names are a few dozen
// names repeated with different layer and expert numbers. When no rule pattern can tell one digit of
// such a number from another, a name's matches depend only on the numbers' lengths, so names are
// looked up by their "number shape" — every digit of a path component that is all digits replaced
// by '0': "model.layers.12.mlp.experts.7.w1.weight" -> "model.layers.00.mlp.experts.0.w1.weight"
// (the "1" of "w1" is part of a word, not a number, and is kept) — and the automaton runs once per
// shape instead of once per tensor.

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rules/matcher.h"

namespace easyplan::rules {

/// A number component of `name` is a maximal run of digits with a '.' or '/' (or the start or end
/// of the name) on both sides. NumberShape replaces their digits by '0'.
std::string NumberShape(std::string_view name);
/// NumberShape written into `out` (its capacity is reused: no allocation once it is large enough).
void NumberShapeInto(std::string_view name, std::string* out);

/// True when no construct of `pattern` that could match a digit of a number component can tell two
/// digits apart, so that a name and its NumberShape match alike. Constructs RE2 accepts that treat
/// the ten digits alike: \d \w \b . [^/] [[:alnum:]] \pN and {m,n} counts. A literal digit is
/// allowed only right after a literal letter or '_' ("w1", "ln_2", "fc12"): it then matches only a
/// digit that follows a letter, never one of a number component. Anything else with a digit in the
/// pattern text (a class like [0-4], \x31, \061, a digit after '/', '.', ')' or '|') is
/// conservatively not blind.
bool IsNumberBlind(std::string_view pattern);

/// Wraps a RuleMatcher for one plan (not thread-safe; no global state). Falls back to running the
/// automaton on every name when some pattern is not number-blind.
class MatchMemo {
 public:
  MatchMemo(const RuleMatcher& matcher, const RuleSet& rules);

  /// Same result as matcher.AllMatches(name). The reference stays valid until the next call.
  const std::vector<int>& AllMatches(std::string_view name);

  /// False when some pattern is not number-blind (every name then runs the automaton).
  bool number_blind() const { return number_blind_; }

  /// Automaton runs so far (for tests and benchmarks).
  int64_t runs() const { return runs_; }

 private:
  const RuleMatcher& matcher_;
  bool number_blind_ = true;
  std::string key_;  // the current name's number shape; kept to reuse its buffer
  std::vector<int> uncached_;
  std::unordered_map<std::string, std::vector<int>> memo_;
  int64_t runs_ = 0;
};

}  // namespace easyplan::rules

#endif  // EASYPLAN_RULES_MATCH_MEMO_H_
