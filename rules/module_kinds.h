#ifndef EASYPLAN_RULES_MODULE_KINDS_H_
#define EASYPLAN_RULES_MODULE_KINDS_H_

// The kinds of EasyDeL module that own parameters and the spec each kind's `craft_sharding` hook gives
// them (rules/_module_kinds.yaml): what EasyDeL's automatic rules read (rules/auto_rules.h).

#include <map>
#include <string>
#include <vector>

#include "core/document.h"
#include "core/status.h"
#include "rules/presets.h"
#include "rules/rule_set.h"

namespace easyplan::rules {

struct ModuleKind {
  std::string name;  ///< "column_linear"
  std::string doc;   ///< the EasyDeL class and where its hook is
  /// Per parameter leaf name, the spec (and cases) the hook gives it, as a rule without a pattern.
  std::map<std::string, Rule> params;
};

struct ModuleKinds {
  std::map<std::string, ModuleKind> kinds;

  /// The kind named `name`, or nullptr.
  const ModuleKind* Find(const std::string& name) const;
  std::vector<std::string> Names() const;
  /// Parses rules/_module_kinds.yaml.
  static StatusOr<ModuleKinds> Parse(const Document& doc, const Presets& presets);
};

}  // namespace easyplan::rules

#endif  // EASYPLAN_RULES_MODULE_KINDS_H_
