#ifndef EASYPLAN_RULES_AUTO_RULES_H_
#define EASYPLAN_RULES_AUTO_RULES_H_

// EasyDeL's automatic partition rules (EasyDeL 090a03b2, `resolve_shardings_automatically`,
// easydel/infra/base_module.py:1181-1284), generated the way EasyDeL generates them: every parameter of
// the model's tree asks the hook of the module kind that owns it (rules/module_kinds.h) for its spec,
// under one anchored pattern per module path with layer indices generalised; duplicates are dropped,
// the first layer's rule wins, and a catch-all `.*` -> P() comes last (docs/RULES.md).

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "rules/module_kinds.h"
#include "rules/rule_set.h"
#include "schemas/tree_builder.h"

namespace easyplan::rules {

/// EasyDeL's pattern for one parameter path (base_module.py:1258-1270): each part re.escape'd, a purely
/// numeric part becomes `\d+`, and the whole anchored as `^(?:.*/)?...$`, then normalised
/// (NormalizeTrailingDollar). "model/layers/0/mlp/up_proj/kernel" ->
/// `^(?:.*/)?model/layers/\d+/mlp/up_proj/kernel(?:/.*)?$`.
std::string AutoRulePattern(std::string_view path);

/// `_normalize_rules_for_variable_leaves` (base_module.py:1139-1161), applied to every string pattern at
/// 090a03b2, a user's too: a final `$` becomes `(?:/.*)?$` (so the rule also matches the optimizer's
/// `.../value` leaves), unless the pattern already ends in `(?:/.*)?$`, `/.*$`, `(?:/value)?$` or
/// `/value$`.
std::string NormalizeTrailingDollar(std::string_view pattern);

/// The automatic rules of a family from its expanded tree template (EasyDeL-side tensors): one rule
/// per (pattern, module kind, parameter), in tree order, then the catch-all. A tensor whose template
/// declares no module, or names an unknown kind, is BadInput at the template's file:line (a tree
/// without module kinds cannot say what EasyDeL's hooks give it). `source` names the set in messages.
StatusOr<RuleSet> GenerateAutoRules(const std::vector<schemas::ExpandedTensor>& tensors, const ModuleKinds& kinds,
                                    const std::string& model_type, const std::string& source);

}  // namespace easyplan::rules

#endif  // EASYPLAN_RULES_AUTO_RULES_H_
