#ifndef EASYPLAN_API_MODEL_H_
#define EASYPLAN_API_MODEL_H_

// One model, resolved once, with every stage a pipeline builds from it computed on first use and
// kept: the parameter tree per source, layout and dtype; the rule set; the links that carry
// EasyDeL rules onto HF names; the rule matches per tree and rule set; the presets, logical dims and
// activation table. Planning the same model on another mesh therefore repeats only the mesh-dependent
// work (planner::LayOutPlan).
//
// Thread safety: a Model is immutable after Load; every const member function may be called from
// many threads at once. Each stage is computed by the first caller that needs it while the others
// wait for that result (api/once_map.h); the data files are parsed under one lock. Share it as
// std::shared_ptr<const Model>: what its stages return stays valid while the Model lives.

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "api/environment.h"
#include "api/once_map.h"
#include "api/options.h"
#include "core/document.h"
#include "core/dtype.h"
#include "core/param_tree.h"
#include "planner/activation_table.h"
#include "planner/memory.h"
#include "planner/plan.h"
#include "planner/tree_matches.h"
#include "rules/rule_library.h"
#include "schemas/resolver.h"
#include "schemas/schema_set.h"
#include "step/hardware.h"

namespace easyplan::api {

/// Where a model's config.json comes from.
struct ConfigSource {
  enum class Kind { kNone, kPath, kText, kDocument };
  Kind kind = Kind::kNone;
  std::string path_or_text;  ///< kPath: a file, a directory holding config.json, or "-"; kText: JSON
  std::string name;          ///< kText: the name errors give the text ("<dict>", "<json>")
  std::optional<Document> document;

  /// No config: EasyDeL's defaults (a user tree planned with --rules).
  static ConfigSource None() { return {}; }
  static ConfigSource Path(std::string path);
  static ConfigSource Text(std::string json, std::string name = "<json>");
  static ConfigSource Parsed(Document document);
};

/// Which tree a stage builds or reads.
struct TreeSpec {
  enum class Source { kTemplate, kFile, kCheckpoint, kGiven };
  Source source = Source::kTemplate;
  std::string path;  ///< kFile, kCheckpoint
  Layout layout = Layout::kEasyDel;
  std::optional<DType> dtype;  ///< kTemplate: the parameter dtype (default: the config's)
  bool include_buffers = false;
  int64_t max_tensors = 10'000'000;
  std::shared_ptr<const ParamTree> given;  ///< kGiven: a tree the caller built

  auto Key() const {
    return std::make_tuple(static_cast<int>(source), path, static_cast<int>(layout),
                           dtype ? static_cast<int>(*dtype) : -1, include_buffers, max_tensors, given.get());
  }
};

class Model {
 public:
  using TreePtr = std::shared_ptr<const ParamTree>;
  using LinksPtr = std::shared_ptr<const std::vector<planner::LayoutLink>>;

  /// Reads and resolves the config (kNone: EasyDeL's defaults alone). `diags` (optional) receives the
  /// resolver's warnings and notes, as errors under options.strict, even when Load fails because of
  /// them; the caller shows them.
  static StatusOr<std::shared_ptr<const Model>> Load(Environment env, ConfigSource source, ConfigOptions options,
                                                     std::vector<Diag>* diags = nullptr);

  /// The same config resolved again with `extra_sets` after the model's own --set values (check's tiny
  /// model, a what-if): the config and overrides documents are not read again. Its resolver warnings
  /// are dropped (this model's were shown).
  StatusOr<std::shared_ptr<const Model>> WithSets(const std::vector<std::string>& extra_sets) const;

  const Environment& env() const { return env_; }
  const ConfigOptions& options() const { return options_; }
  bool has_config() const { return has_config_; }
  const schemas::ResolvedConfig& resolved() const { return resolved_; }
  const Json& config() const { return resolved_.config; }
  /// The config's model_type, "" when it has none.
  const std::string& model_type() const { return model_type_; }

  /// The tree `spec` names: the family template, a tree JSON file, a checkpoint's metadata or the
  /// caller's own tree.
  StatusOr<TreePtr> Tree(const TreeSpec& spec) const;
  /// The family's tree template; BadInput (with a did-you-mean and --tree) when it has none.
  StatusOr<const schemas::TreeTemplate*> TreeTemplate() const;

  /// Every family name with a schema.
  std::vector<std::string> FamilyNames() const;
  /// The family's numeric_check declaration (`check`'s tiny model); nullptr when it has none.
  StatusOr<const schemas::NumericCheckDecl*> NumericCheck(const std::string& model_type) const;
  /// `decl` (this model's family's declaration, complete) at this model's config and EasyDeL version: a
  /// forward variant may depend on the version, as the tree does (gpt-oss's experts). Worked out once.
  StatusOr<const schemas::NumericCheckSpec*> ForwardSpec(const schemas::NumericCheckDecl& decl) const;

  /// `rules`: "builtin" (by model_type) or a rule file of at most `max_rules` rules. A key the file gives
  /// twice is a warning through Environment::warn (once), an error under --strict. The model's EasyDeL
  /// version decides what "builtin" is: the family's table (rules/<family>.yaml) or the rules EasyDeL
  /// generates from its module hooks (rules/auto_rules.h); under a generating version a rule file's
  /// patterns get EasyDeL's `$` normalisation.
  StatusOr<const rules::RuleSet*> Rules(const std::string& rules, int64_t max_rules) const;
  /// The EasyDeL version this model describes (ConfigOptions::easydel_version).
  const schemas::EasyDelVersion& easydel_version() const { return *version_; }
  StatusOr<const rules::Presets*> Presets() const;
  StatusOr<const rules::LogicalDims*> LogicalDims() const;
  StatusOr<const planner::ActivationTable*> ActivationTable() const;
  /// The accelerators of the hardware catalogue by part (schemas/hardware/, --hardware NAME): its
  /// memory-only entries and the full profiles none of them stands for. Each budgets memory.
  StatusOr<const std::vector<step::HardwareProfile>*> DeviceKinds() const;
  /// `--hardware NAME|FILE` (api/hardware.h): a profile of schemas/hardware/, or a YAML file (a path
  /// with '/' or ending in .yaml/.yml), loaded once per spelling and kept. A key the file gives twice is
  /// a warning through Environment::warn, an error under --strict.
  StatusOr<const step::HardwareProfile*> Hardware(const std::string& name_or_file) const;

  /// How each tensor of `tree` is seen by `rule_set` when the two are in different layouts (EasyDeL
  /// rules on HF names); empty when they agree. BadInput when no mapping exists.
  StatusOr<LinksPtr> Links(const TreeSpec& tree_spec, const TreePtr& tree, const rules::RuleSet& rule_set) const;

  /// The mesh-free half of a plan (planner::MatchTree): `tree` (the tree of `tree_spec`) matched
  /// against `rule_set` (a set this model returned) through `links` (Links() of the same pair). Kept
  /// per (tree, rule set), except for a caller's own tree; the result keeps `tree` and `links` alive.
  StatusOr<std::shared_ptr<const planner::TreeMatches>> Matches(const TreeSpec& tree_spec, const TreePtr& tree,
                                                                const rules::RuleSet& rule_set,
                                                                const LinksPtr& links) const;

 private:
  Model(Environment env, ConfigOptions options);
  StatusOr<const rules::RuleSet*> GeneratedRules(const std::string& family) const;
  static StatusOr<std::shared_ptr<const Model>> Resolve(Environment env, ConfigOptions options, bool has_config,
                                                        Document config, std::optional<Document> overrides,
                                                        std::vector<Diag>* diags);
  /// A key given twice in a user's --rules file or --hardware profile (Document::DuplicateKeyWarnings):
  /// each warning goes to env_.warn, or under --strict the first is the error, as for a config.
  Status ReportDuplicateKeys(const std::vector<Diag>& warnings) const;

  Environment env_;
  ConfigOptions options_;
  bool has_config_ = false;
  schemas::ResolvedConfig resolved_;
  // What resolved_ came from, for WithSets.
  std::optional<Document> config_document_;
  std::optional<Document> overrides_document_;
  std::string model_type_;
  const schemas::EasyDelVersion* version_ = nullptr;  // owned by schemas_

  // The data files, parsed on first use by classes that are not thread-safe: one lock for both.
  mutable std::mutex data_mutex_;
  mutable schemas::SchemaSet schemas_;
  mutable rules::RuleLibrary library_;
  mutable std::set<const rules::RuleSet*> rule_files_reported_;  // their duplicate keys, warned once
  // Rule sets derived for the model's version: generated from module hooks (one model_type, one
  // version: one set), or a rule file with EasyDeL's `$` normalisation (by file set).
  mutable std::unique_ptr<rules::RuleSet> generated_rules_;
  mutable std::map<const rules::RuleSet*, std::unique_ptr<rules::RuleSet>> normalized_rules_;

  using TreeKey = decltype(std::declval<TreeSpec>().Key());
  OnceMap<TreeKey, ParamTree> trees_;
  OnceMap<std::tuple<TreeKey, const rules::RuleSet*>, std::vector<planner::LayoutLink>> links_;
  // TreeMatches points into its tree and links: they live beside it.
  struct HeldMatches {
    TreePtr tree;
    LinksPtr links;
    planner::TreeMatches matches;
  };
  OnceMap<std::tuple<TreeKey, const rules::RuleSet*>, HeldMatches> matches_;
  OnceMap<int, planner::ActivationTable> activation_table_;
  OnceMap<int, std::vector<step::HardwareProfile>> device_kinds_;
  OnceMap<std::string, step::HardwareProfile> hardware_;
  OnceMap<int, schemas::NumericCheckSpec> forward_spec_;
};

/// What `easyplan resolve` prints: the resolved config, or {"easydel_version", "config", "provenance"} with
/// `provenance`.
Json ResolvedDocument(const Model& model, bool provenance);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_MODEL_H_
