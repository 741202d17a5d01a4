#ifndef EASYPLAN_PLANNER_EXPORT_RULES_H_
#define EASYPLAN_PLANNER_EXPORT_RULES_H_

// `export --to rules`: the plan's rule set as a rule file (docs/RULES.md) laid on the plan's mesh, a table a
// user can start from. Each rule's spec is written in mesh axes as the first tensor it matched holds it:
// after the shape-aware drop (EasyDeL's resolve_safe_sharding, easydel/layers/_sharding.py:145-166, at
// 090a03b2, which a generated rule applies on its first layer's shape), so the file fed back through
// `--rules` gives the same plan. A rule no tensor matched keeps its spec as written (preset or tokens).

#include <string>

#include "core/param_tree.h"
#include "core/status.h"
#include "planner/plan.h"
#include "rules/rule_set.h"

namespace easyplan::planner {

StatusOr<std::string> RuleFileExport(const Plan& plan, const rules::RuleSet& rules,
                                     const std::string& easydel_version = "");

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_EXPORT_RULES_H_
