#ifndef EASYPLAN_API_EXPLAIN_H_
#define EASYPLAN_API_EXPLAIN_H_

// `explain`: for each tensor whose name PATTERN finds, every rule tried, the one that matched, the rules
// it shadows, how its spec resolved, what the correction changed, and which devices hold which block.
// The artifact is text (docs/RULES.md shows it).

#include <memory>
#include <string>

#include "api/checked.h"
#include "api/model.h"
#include "api/options.h"

namespace easyplan::api {

/// PATTERN must be a non-empty RE2 regex.
Status CheckExplainPattern(const std::string& pattern);

/// The explanation of every tensor of `model`'s plan whose name `pattern` finds (at most 20 shown).
StatusOr<std::string> Explain(const std::shared_ptr<const Model>& model, const Checked<PlanOptions>& options,
                              const std::string& pattern);
/// The same for options not checked yet: checked once (CheckPlanOptions), then explained.
StatusOr<std::string> Explain(const std::shared_ptr<const Model>& model, const PlanOptions& options,
                              const std::string& pattern);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_EXPLAIN_H_
