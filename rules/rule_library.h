#ifndef EASYPLAN_RULES_RULE_LIBRARY_H_
#define EASYPLAN_RULES_RULE_LIBRARY_H_

#include <map>
#include <memory>
#include <string>

#include "core/file_system.h"
#include "core/limits.h"
#include "rules/logical_dims.h"
#include "rules/module_kinds.h"
#include "rules/presets.h"
#include "rules/rule_set.h"
#include "schemas/data_source.h"

namespace easyplan::rules {

/// The built-in rule sets (rules/<family>.yaml, embedded at build time) and the presets, loaded on
/// first use; or a user's rule file (`--rules FILE`). One per run, not thread-safe.
class RuleLibrary {
 public:
  explicit RuleLibrary(schemas::DataSource source) : source_(std::move(source)) {}

  StatusOr<const Presets*> GetPresets();

  /// rules/_logical_dims.yaml: which dims count heads, kv heads, experts or vocabulary entries.
  StatusOr<const LogicalDims*> GetLogicalDims();

  /// rules/_module_kinds.yaml: what each EasyDeL module kind's hook gives its parameters.
  StatusOr<const ModuleKinds*> GetModuleKinds();
  /// The built-in rule set whose `model_types` lists `model_type`. BadInput naming the families that
  /// have rules (with a did-you-mean) when none does.
  StatusOr<const RuleSet*> ForModelType(const std::string& model_type);

  /// A user's rule file, read through `fs` and parsed under `limits` (at most limits.max_input_bytes,
  /// its aliases expanded included; at most `max_rules` rules).
  StatusOr<const RuleSet*> FromFile(const FileSystem& fs, const std::string& path, const Limits& limits,
                                    size_t max_rules = 100000);

 private:
  StatusOr<const RuleSet*> Load(const std::string& path);

  schemas::DataSource source_;
  std::unique_ptr<Presets> presets_;
  std::unique_ptr<LogicalDims> logical_dims_;
  std::unique_ptr<ModuleKinds> module_kinds_;
  std::map<std::string, std::unique_ptr<RuleSet>> sets_;  // by path
};

}  // namespace easyplan::rules

#endif  // EASYPLAN_RULES_RULE_LIBRARY_H_
