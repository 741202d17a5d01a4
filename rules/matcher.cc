#include "rules/matcher.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>

namespace easyplan::rules {

RuleMatcher::~RuleMatcher() = default;

StatusOr<std::unique_ptr<RuleMatcher>> RuleMatcher::Build(const RuleSet& rules) {
  RE2::Options options;
  options.set_log_errors(false);
  // Big rule sets of generated per-layer patterns need more than RE2's 8 MiB default DFA budget.
  options.set_max_mem(int64_t{256} << 20);
  auto matcher = std::unique_ptr<RuleMatcher>(new RuleMatcher());
  matcher->set_ = std::make_unique<RE2::Set>(options, RE2::UNANCHORED);
  for (const Rule& rule : rules.rules) {
    std::string error;
    if (matcher->set_->Add(rule.pattern, &error) < 0) {
      return Status::BadInput(rule.loc, "invalid pattern \"" + rule.pattern + "\": " + error);
    }
  }
  matcher->size_ = static_cast<int>(rules.rules.size());
  if (matcher->size_ > 0 && !matcher->set_->Compile()) {
    return Status::BadInput({rules.source}, "the rule patterns are too large to compile together (RE2 memory limit)");
  }
  return matcher;
}

std::optional<int> RuleMatcher::FirstMatch(std::string_view name) const {
  std::vector<int> matches = AllMatches(name);
  if (matches.empty()) return std::nullopt;
  return matches.front();
}

std::vector<int> RuleMatcher::AllMatches(std::string_view name) const {
  std::vector<int> matches;
  if (size_ == 0) return matches;
  set_->Match(name, &matches);
  std::sort(matches.begin(), matches.end());
  return matches;
}

}  // namespace easyplan::rules
