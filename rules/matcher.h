#ifndef EASYPLAN_RULES_MATCHER_H_
#define EASYPLAN_RULES_MATCHER_H_

#include <re2/set.h>

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "rules/rule_set.h"

namespace easyplan::rules {

/// eformer's `match_partition_rules` lookup, first match wins under unanchored search (Python
/// `re.search`), in one pass per name: every pattern sits in one RE2::Set, so matching a name costs one
/// automaton run, not one regex run per rule.
class RuleMatcher {
 public:
  /// Compiles every pattern of `rules` (already validated by ParseRuleSet; an RE2::Set memory limit
  /// hit on pathological patterns is reported here with the file).
  static StatusOr<std::unique_ptr<RuleMatcher>> Build(const RuleSet& rules);
  ~RuleMatcher();

  /// Index of the first rule whose pattern occurs in `name`, or nullopt.
  std::optional<int> FirstMatch(std::string_view name) const;

  /// Indexes of every rule whose pattern occurs in `name`, ascending (for explain and shadow analysis).
  std::vector<int> AllMatches(std::string_view name) const;

 private:
  RuleMatcher() = default;
  std::unique_ptr<re2::RE2::Set> set_;
  int size_ = 0;
};

}  // namespace easyplan::rules

#endif  // EASYPLAN_RULES_MATCHER_H_
