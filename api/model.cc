#include "api/model.h"

#include "api/choices.h"
#include "api/config_input.h"
#include "api/hardware.h"
#include "api/option_checks.h"
#include "api/tree_source.h"
#include "core/did_you_mean.h"
#include "core/json_parse.h"
#include "planner/layout_links.h"
#include "rules/auto_rules.h"
#include "schemas/tree_builder.h"

namespace easyplan::api {

ConfigSource ConfigSource::Path(std::string path) {
  ConfigSource source;
  source.kind = Kind::kPath;
  source.path_or_text = std::move(path);
  return source;
}

ConfigSource ConfigSource::Text(std::string json, std::string name) {
  ConfigSource source;
  source.kind = Kind::kText;
  source.path_or_text = std::move(json);
  source.name = std::move(name);
  return source;
}

ConfigSource ConfigSource::Parsed(Document document) {
  ConfigSource source;
  source.kind = Kind::kDocument;
  source.document = std::move(document);
  return source;
}

namespace {

StatusOr<Document> ConfigDocument(const Environment& env, ConfigSource& source) {
  switch (source.kind) {
    case ConfigSource::Kind::kNone:
      return ParseJsonDocument("{}", "<defaults>", env.limits);
    case ConfigSource::Kind::kPath:
      return LoadConfigDocument(env, source.path_or_text);
    case ConfigSource::Kind::kText:
      return ParseJsonDocument(source.path_or_text, source.name, env.limits);
    case ConfigSource::Kind::kDocument:
      return std::move(*source.document);
  }
  return Status::Internal("unknown config source");
}

Status CheckConfigOptions(const ConfigOptions& options) {
  // As the command table declares their checks (api/option_table.cc).
  EP_RETURN_IF_ERROR(CheckOptionValue("defaults", Json(options.defaults)));
  if (options.devices) EP_RETURN_IF_ERROR(CheckOptionValue("devices", Json(*options.devices)));
  return Status();
}

}  // namespace

Model::Model(Environment env, ConfigOptions options)
    : env_(std::move(env)), options_(std::move(options)), schemas_(env_.Data()), library_(env_.Data()) {}

StatusOr<std::shared_ptr<const Model>> Model::Load(Environment env, ConfigSource source, ConfigOptions options,
                                                   std::vector<Diag>* diags) {
  if (!env.fs) return Status::Internal("Model::Load: the environment has no file system");
  EP_RETURN_IF_ERROR(CheckConfigOptions(options));
  const bool has_config = source.kind != ConfigSource::Kind::kNone;
  EP_ASSIGN_OR_RETURN(Document config, ConfigDocument(env, source));
  std::optional<Document> overrides;
  if (has_config && !options.overrides.empty()) {
    EP_ASSIGN_OR_RETURN(overrides, LoadOverridesDocument(env, options.overrides));
  }
  return Resolve(std::move(env), std::move(options), has_config, std::move(config), std::move(overrides), diags);
}

StatusOr<std::shared_ptr<const Model>> Model::WithSets(const std::vector<std::string>& extra_sets) const {
  ConfigOptions options = options_;
  options.sets.insert(options.sets.end(), extra_sets.begin(), extra_sets.end());
  return Resolve(env_, std::move(options), has_config_, *config_document_, overrides_document_, nullptr);
}

StatusOr<std::shared_ptr<const Model>> Model::Resolve(Environment env, ConfigOptions options, bool has_config,
                                                      Document config, std::optional<Document> overrides,
                                                      std::vector<Diag>* diags) {
  std::shared_ptr<Model> model(new Model(std::move(env), std::move(options)));
  model->has_config_ = has_config;
  model->config_document_ = config;
  model->overrides_document_ = overrides;
  {
    EP_ASSIGN_OR_RETURN(const schemas::EasyDelVersions* versions, model->schemas_.Versions());
    EP_ASSIGN_OR_RETURN(model->version_, versions->Find(model->options_.easydel_version));
  }
  schemas::ConfigInput input{std::move(config), std::move(overrides), {}};
  schemas::ResolveOptions resolve;
  resolve.easydel_version = model->version_->name;
  if (has_config) {
    input.sets = model->options_.sets;
    resolve.profile =
        model->options_.defaults == "init" ? schemas::DefaultsProfile::kInit : schemas::DefaultsProfile::kAddBasic;
    resolve.devices = model->options_.devices;
    resolve.limits = model->env_.limits;
  }
  EP_ASSIGN_OR_RETURN(model->resolved_, schemas::ResolveConfig(input, resolve, model->schemas_));
  // EasyDeL's defaults alone are no user's input: nothing to warn about.
  if (!has_config) model->resolved_.diags.clear();
  bool strict_failure = false;
  for (Diag& diag : model->resolved_.diags) {
    if (model->options_.strict && diag.severity == Severity::kWarning) {
      diag.severity = Severity::kError;
      strict_failure = true;
    }
  }
  if (diags) *diags = model->resolved_.diags;
  if (strict_failure) return Status::BadInput({}, "--strict: warnings are errors; nothing written");
  auto type = model->resolved_.config.find("model_type");
  if (type != model->resolved_.config.end() && type->is_string()) model->model_type_ = type->get<std::string>();
  return std::shared_ptr<const Model>(std::move(model));
}

StatusOr<const schemas::TreeTemplate*> Model::TreeTemplate() const {
  const schemas::TreeTemplate* tree = nullptr;
  std::vector<std::string> known;
  {
    std::lock_guard<std::mutex> lock(data_mutex_);
    if (!resolved_.family.empty()) {
      EP_ASSIGN_OR_RETURN(tree, schemas_.Tree(resolved_.family));
    }
    if (tree != nullptr) return tree;
    known = schemas_.TreeNames();
  }
  std::string message = model_type_.empty() ? "the config has no model_type, so easyplan has no parameter tree for it"
                                            : "no parameter-tree template for model_type '" + model_type_ + "'";
  if (auto suggestion = SuggestClosest(model_type_, known)) message += " (did you mean '" + *suggestion + "'?)";
  return Status::BadInput({"", "/model_type"}, message,
                          {"templates exist for " + JoinQuoted(known),
                           "for another model, dump its tree as JSON and pass --tree FILE.json"});
}

namespace {

/// Every tree enters through Model::Tree, and this is where it is checked, once: each tensor's elements
/// and bytes, and the tree's totals, fit in int64. Every later sum over a tree's tensors (a device's
/// share, a group, a stage, a checkpoint's total) is at most these totals, so none of them can wrap (a
/// [2^62, 1] float64 tensor read as "0 B per device" and "-1 bytes", issue 44 item 2). The error names
/// the tree's file (a --tree file, a checkpoint), which ParamTree::Totals cannot know.
Status CheckTreeFits(const ParamTree& tree, const std::string& source) {
  StatusOr<TreeTotals> totals = tree.Totals();
  if (totals.ok()) return Status();
  Status status = totals.status();
  if (status.diag().loc.file.empty() && !source.empty()) status.mutable_diag().loc.file = source;
  return status;
}

}  // namespace

StatusOr<Model::TreePtr> Model::Tree(const TreeSpec& spec) const {
  if (spec.source == TreeSpec::Source::kGiven) {
    if (!spec.given) return Status::Internal("Model::Tree: a given tree without the tree");
    // Not kept (its address may later name another tree), so checked at each use: O(tensors).
    EP_RETURN_IF_ERROR(CheckTreeFits(*spec.given, ""));
    return spec.given;
  }
  return trees_.Get(spec.Key(), [&]() -> StatusOr<ParamTree> {
    TreeRequest request{spec.layout, spec.dtype, spec.include_buffers, spec.max_tensors, version_->name};
    StatusOr<ParamTree> tree = ParamTree{};
    switch (spec.source) {
      case TreeSpec::Source::kFile:
        tree = LoadUserTree(env_, spec.path, spec.max_tensors);
        break;
      case TreeSpec::Source::kCheckpoint:
        request.layout = Layout::kHf;
        tree = LoadCheckpointTree(env_, spec.path, request);
        break;
      case TreeSpec::Source::kTemplate:
      case TreeSpec::Source::kGiven: {
        EP_ASSIGN_OR_RETURN(const schemas::TreeTemplate* tree_template, TreeTemplate());
        tree = BuildTemplateTree(*tree_template, resolved_.config, request);
        break;
      }
    }
    if (tree.ok()) EP_RETURN_IF_ERROR(CheckTreeFits(*tree, spec.path == "-" ? "<stdin>" : spec.path));
    return tree;
  });
}

std::vector<std::string> Model::FamilyNames() const {
  std::lock_guard<std::mutex> lock(data_mutex_);
  return schemas_.FamilyNames();
}

StatusOr<const schemas::NumericCheckDecl*> Model::NumericCheck(const std::string& model_type) const {
  std::lock_guard<std::mutex> lock(data_mutex_);
  return schemas_.NumericCheck(model_type);
}

StatusOr<const schemas::NumericCheckSpec*> Model::ForwardSpec(const schemas::NumericCheckDecl& decl) const {
  EP_ASSIGN_OR_RETURN(std::shared_ptr<const schemas::NumericCheckSpec> spec,
                      forward_spec_.Get(0, [&]() -> StatusOr<schemas::NumericCheckSpec> {
                        return schemas::NumericCheckFor(decl, schemas::VersionScope(config(), easydel_version().name));
                      }));
  return spec.get();
}

StatusOr<const rules::RuleSet*> Model::Rules(const std::string& rules, int64_t max_rules) const {
  const bool generated = version_->rules == schemas::RuleSource::kGenerated;
  std::lock_guard<std::mutex> lock(data_mutex_);
  if (rules == "builtin") {
    if (model_type_.empty()) {
      return Status::BadInput({},
                              has_config_ ? "the config has no model_type, so there are no built-in rules for it"
                                          : "without CONFIG there is no model_type to pick built-in rules by",
                              {"pass --rules FILE (docs/RULES.md describes the format)"});
    }
    // An alias (kimi_k2) plans with the rules of the family it names (deepseek_v3).
    const std::string& family = resolved_.family.empty() ? model_type_ : resolved_.family;
    if (!generated) return library_.ForModelType(family);
    return GeneratedRules(family);
  }
  EP_ASSIGN_OR_RETURN(const rules::RuleSet* set,
                      library_.FromFile(*env_.fs, rules, env_.limits, static_cast<size_t>(max_rules)));
  if (rule_files_reported_.insert(set).second || options_.strict) {
    EP_RETURN_IF_ERROR(ReportDuplicateKeys(set->duplicate_keys));
  }
  if (!generated) return set;
  // EasyDeL normalises every string pattern it is given (base_module.py:1139-1161).
  std::unique_ptr<rules::RuleSet>& normalized = normalized_rules_[set];
  if (!normalized) {
    normalized = std::make_unique<rules::RuleSet>(*set);
    for (rules::Rule& rule : normalized->rules) rule.pattern = rules::NormalizeTrailingDollar(rule.pattern);
  }
  return normalized.get();
}

// Called with data_mutex_ held.
StatusOr<const rules::RuleSet*> Model::GeneratedRules(const std::string& family) const {
  if (generated_rules_) return generated_rules_.get();
  const schemas::EasyDelVersion& version = *version_;
  EP_ASSIGN_OR_RETURN(const schemas::TreeTemplate* tree_template, schemas_.Tree(family));
  if (!tree_template) {
    const std::vector<std::string> known = schemas_.TreeNames();
    std::string message = "no built-in partition rules for model_type '" + family + "'";
    if (auto suggestion = SuggestClosest(family, known)) message += " (did you mean '" + *suggestion + "'?)";
    message += ": EasyDeL " + version.name + " generates them from the modules of its parameter-tree template";
    return Status::BadInput({"", "/model_type"}, message,
                            {"templates exist for " + JoinQuoted(known), "write your own rules and pass --rules FILE"});
  }
  schemas::TreeOptions options;
  options.easydel_version = version.name;
  EP_ASSIGN_OR_RETURN(std::vector<schemas::ExpandedTensor> tensors,
                      schemas::ExpandTreeTemplate(*tree_template, resolved_.config, options));
  EP_ASSIGN_OR_RETURN(const rules::ModuleKinds* kinds, library_.GetModuleKinds());
  EP_ASSIGN_OR_RETURN(rules::RuleSet set, rules::GenerateAutoRules(tensors, *kinds, family,
                                                                   "automatic rules (" + tree_template->source + ")"));
  generated_rules_ = std::make_unique<rules::RuleSet>(std::move(set));
  return generated_rules_.get();
}

Status Model::ReportDuplicateKeys(const std::vector<Diag>& warnings) const {
  for (const Diag& warning : warnings) {
    if (options_.strict) {
      Diag error = warning;
      error.severity = Severity::kError;
      error.notes.push_back("--strict: warnings are errors");
      return Status::Error(std::move(error));
    }
    if (env_.warn) env_.warn(warning);
  }
  return Status();
}

StatusOr<const rules::Presets*> Model::Presets() const {
  std::lock_guard<std::mutex> lock(data_mutex_);
  return library_.GetPresets();
}

StatusOr<const rules::LogicalDims*> Model::LogicalDims() const {
  std::lock_guard<std::mutex> lock(data_mutex_);
  return library_.GetLogicalDims();
}

StatusOr<const planner::ActivationTable*> Model::ActivationTable() const {
  EP_ASSIGN_OR_RETURN(std::shared_ptr<const planner::ActivationTable> table,
                      activation_table_.Get(0, [&]() -> StatusOr<planner::ActivationTable> {
                        EP_ASSIGN_OR_RETURN(Document doc, env_.Data().ReadDocument("rules/_activations.yaml"));
                        return planner::ActivationTable::Parse(doc);
                      }));
  return table.get();  // owned by activation_table_, which lives as long as the model
}

StatusOr<const std::vector<step::HardwareProfile>*> Model::DeviceKinds() const {
  EP_ASSIGN_OR_RETURN(std::shared_ptr<const std::vector<step::HardwareProfile>> kinds,
                      device_kinds_.Get(0, [&]() -> StatusOr<std::vector<step::HardwareProfile>> {
                        // The catalogue's accelerators by part: every memory-only entry, and each full
                        // profile no memory-only entry stands for (a100-80g is both).
                        EP_ASSIGN_OR_RETURN(const std::vector<step::HardwareProfile> catalogue,
                                            LoadHardwareCatalogue(env_));
                        std::set<std::string> listed;
                        for (const step::HardwareProfile& entry : catalogue) {
                          if (entry.memory_only) listed.insert(entry.profiles.begin(), entry.profiles.end());
                        }
                        std::vector<step::HardwareProfile> kinds;
                        for (const step::HardwareProfile& entry : catalogue) {
                          if (!entry.memory_only && listed.contains(entry.name)) continue;
                          kinds.push_back(entry);
                        }
                        return kinds;
                      }));
  return kinds.get();
}

StatusOr<const step::HardwareProfile*> Model::Hardware(const std::string& name_or_file) const {
  EP_ASSIGN_OR_RETURN(std::shared_ptr<const step::HardwareProfile> profile,
                      hardware_.Get(name_or_file, [&]() -> StatusOr<step::HardwareProfile> {
                        std::vector<Diag> duplicate_keys;
                        EP_ASSIGN_OR_RETURN(step::HardwareProfile profile,
                                            LoadHardwareProfile(env_, name_or_file, &duplicate_keys));
                        EP_RETURN_IF_ERROR(ReportDuplicateKeys(duplicate_keys));
                        return profile;
                      }));
  return profile.get();  // owned by hardware_, which lives as long as the model
}

StatusOr<Model::LinksPtr> Model::Links(const TreeSpec& tree_spec, const TreePtr& tree,
                                       const rules::RuleSet& rule_set) const {
  static const LinksPtr kNone = std::make_shared<const std::vector<planner::LayoutLink>>();
  if (rule_set.layout == tree->layout) return kNone;
  if (rule_set.layout == Layout::kHf) {
    return Status::BadInput({SourceLoc{rule_set.source}},
                            "the rules are written for HF names (layout: hf), but the tree has EasyDeL names",
                            {"plan the HF tree: add --layout hf (or give an HF-layout --tree / --from)"});
  }
  if (!has_config_ || resolved_.family.empty()) {
    return Status::BadInput({SourceLoc{rule_set.source}},
                            "the rules are written for EasyDeL names, but the tree has HF names, and without a "
                            "config of a known family easyplan cannot map one onto the other",
                            {"give CONFIG, or rules written for HF names (layout: hf)"});
  }
  const auto link = [&]() -> StatusOr<std::vector<planner::LayoutLink>> {
    EP_ASSIGN_OR_RETURN(const schemas::TreeTemplate* tree_template, TreeTemplate());
    schemas::TreeOptions options;
    options.dtype = tree_spec.dtype;
    options.include_buffers = true;
    options.max_tensors = tree_spec.max_tensors;
    options.easydel_version = version_->name;
    EP_ASSIGN_OR_RETURN(std::vector<schemas::ExpandedTensor> expanded,
                        schemas::ExpandTreeTemplate(*tree_template, resolved_.config, options));
    return planner::LinkHfToEasyDel(*tree, expanded);
  };
  // A caller's own tree is not kept: its address may later name another tree.
  if (tree_spec.source == TreeSpec::Source::kGiven) {
    EP_ASSIGN_OR_RETURN(std::vector<planner::LayoutLink> links, link());
    return std::make_shared<const std::vector<planner::LayoutLink>>(std::move(links));
  }
  return links_.Get(std::make_tuple(tree_spec.Key(), &rule_set), link);
}

Json ResolvedDocument(const Model& model, bool provenance) {
  if (!provenance) return model.resolved().config;
  Json document = Json::object();
  document["easydel_version"] = model.easydel_version().name;  // whose defaults filled the config
  document["config"] = model.resolved().config;
  document["provenance"] = model.resolved().provenance;
  return document;
}

StatusOr<std::shared_ptr<const planner::TreeMatches>> Model::Matches(const TreeSpec& tree_spec, const TreePtr& tree,
                                                                     const rules::RuleSet& rule_set,
                                                                     const LinksPtr& links) const {
  const auto match = [&]() -> StatusOr<HeldMatches> {
    EP_ASSIGN_OR_RETURN(const rules::Presets* presets, Presets());
    EP_ASSIGN_OR_RETURN(const rules::LogicalDims* logical_dims, LogicalDims());
    HeldMatches held{tree, links, {}};
    EP_ASSIGN_OR_RETURN(held.matches, planner::MatchTree({.tree = tree.get(),
                                                          .rules = &rule_set,
                                                          .presets = presets,
                                                          .config = &resolved_.config,
                                                          .links = links.get(),
                                                          .logical_dims = logical_dims}));
    return held;
  };
  std::shared_ptr<const HeldMatches> held;
  if (tree_spec.source == TreeSpec::Source::kGiven) {
    // A caller's own tree is not kept: its address may later name another tree.
    EP_ASSIGN_OR_RETURN(HeldMatches matched, match());
    held = std::make_shared<const HeldMatches>(std::move(matched));
  } else {
    EP_ASSIGN_OR_RETURN(held, matches_.Get(std::make_tuple(tree_spec.Key(), &rule_set), match));
  }
  return std::shared_ptr<const planner::TreeMatches>(held, &held->matches);
}

}  // namespace easyplan::api
