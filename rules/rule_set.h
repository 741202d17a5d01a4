#ifndef EASYPLAN_RULES_RULE_SET_H_
#define EASYPLAN_RULES_RULE_SET_H_

// Ordered regex partition rules, as EasyDeL's `get_partition_rules` and eformer's
// `match_partition_rules` use them, loaded from a rule file (docs/RULES.md):
//
//   layout: easydel
//   rules:
//     - {match: "self_attn/(q_proj|k_proj|v_proj)/kernel", spec: ColumnWise}
//     - {match: "mlp/gate/kernel", spec: ColumnWise, cases: [{when: use_expert_tensor_mode, spec: Replicated}]}
//     - {match: ".*", spec: [null]}

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/document.h"
#include "core/json.h"
#include "core/limits.h"
#include "core/param_tree.h"
#include "core/status.h"
#include "rules/presets.h"
#include "schemas/expression.h"
#include "schemas/schema_reader.h"

namespace easyplan::rules {

/// A spec as written in a rule file, before it meets a config and a mesh: an eformer preset name, or
/// one entry per dim where each entry is null, one name or a list of names (mesh axes or semantic
/// tokens such as `head` / `__HEAD__`).
struct SpecSource {
  std::optional<std::string> preset;
  std::vector<std::optional<std::vector<std::string>>> dims;  ///< when !preset; nullopt = None
  std::string text;                                           ///< as written, for messages
};

struct RuleCase {
  schemas::Expression when;
  SpecSource spec;
};

struct Rule {
  std::string pattern;
  SpecSource spec;
  std::vector<RuleCase> cases;  ///< first case whose `when` holds over the resolved config wins
  std::string note;
  SourceLoc loc;  ///< file:line of the rule, for findings
};

struct RuleSet {
  Layout layout = Layout::kEasyDel;
  std::vector<std::string> model_types;  ///< families that use this file as their built-in rules
  std::vector<Rule> rules;
  std::string source;    ///< file as messages show it
  bool builtin = false;  ///< one of easyplan's tables (rules/<family>.yaml), not the user's --rules file
  /// A warning per key given twice in the file (Document::DuplicateKeyWarnings), naming both lines: the
  /// last value is used, as for a config; api::Model reports them, or refuses the file under --strict.
  std::vector<Diag> duplicate_keys;
};

/// The `spec` (a preset name or one entry per dim) and `cases` keys of `entry` at `pointer` into `rule`:
/// a rule of a rule file, or a parameter of a module kind (rules/module_kinds.h).
Status ParseRuleSpec(const schemas::SchemaReader& reader, const Presets& presets, const Json& entry,
                     const std::string& pointer, Rule& rule);

/// Parses a rule file (YAML or JSON). Every pattern is compiled here (RE2); an invalid pattern, or
/// Python-only syntax RE2 rejects (look-arounds, backreferences), is an error at its file:line with a
/// hint. Specs are checked for shape (presets must exist; entries must be null, names or lists of
/// names); tokens and axes are resolved later, against a config and a mesh. The text is parsed under
/// `limits` (depth, values, and the bytes its YAML aliases expand to).
StatusOr<RuleSet> ParseRuleSet(std::string_view text, const std::string& path, const Presets& presets,
                               size_t max_rules = 100000, const Limits& limits = {});
/// The same from the parsed file (schemas::DataSource::ReadDocument), named by doc.file().
StatusOr<RuleSet> ParseRuleSet(const Document& doc, const Presets& presets, size_t max_rules = 100000);

}  // namespace easyplan::rules

#endif  // EASYPLAN_RULES_RULE_SET_H_
