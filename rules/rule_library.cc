#include "rules/rule_library.h"

#include <algorithm>

#include "core/did_you_mean.h"

namespace easyplan::rules {

StatusOr<const Presets*> RuleLibrary::GetPresets() {
  if (!presets_) {
    const std::string path = "rules/_presets.yaml";
    EP_ASSIGN_OR_RETURN(Document doc, source_.ReadDocument(path));
    EP_ASSIGN_OR_RETURN(Presets presets, Presets::Parse(doc));
    presets_ = std::make_unique<Presets>(std::move(presets));
  }
  return presets_.get();
}

StatusOr<const LogicalDims*> RuleLibrary::GetLogicalDims() {
  if (!logical_dims_) {
    const std::string path = "rules/_logical_dims.yaml";
    EP_ASSIGN_OR_RETURN(Document doc, source_.ReadDocument(path));
    EP_ASSIGN_OR_RETURN(LogicalDims dims, LogicalDims::Parse(doc));
    logical_dims_ = std::make_unique<LogicalDims>(std::move(dims));
  }
  return logical_dims_.get();
}

StatusOr<const ModuleKinds*> RuleLibrary::GetModuleKinds() {
  if (!module_kinds_) {
    EP_ASSIGN_OR_RETURN(const Presets* presets, GetPresets());
    EP_ASSIGN_OR_RETURN(Document doc, source_.ReadDocument("rules/_module_kinds.yaml"));
    EP_ASSIGN_OR_RETURN(ModuleKinds kinds, ModuleKinds::Parse(doc, *presets));
    module_kinds_ = std::make_unique<ModuleKinds>(std::move(kinds));
  }
  return module_kinds_.get();
}

StatusOr<const RuleSet*> RuleLibrary::Load(const std::string& path) {
  if (auto it = sets_.find(path); it != sets_.end()) return it->second.get();
  EP_ASSIGN_OR_RETURN(const Presets* presets, GetPresets());
  EP_ASSIGN_OR_RETURN(Document doc, source_.ReadDocument(path));
  EP_ASSIGN_OR_RETURN(RuleSet set, ParseRuleSet(doc, *presets));
  set.builtin = true;
  auto& slot = sets_[path];
  slot = std::make_unique<RuleSet>(std::move(set));
  return slot.get();
}

StatusOr<const RuleSet*> RuleLibrary::ForModelType(const std::string& model_type) {
  std::vector<std::string> files;
  for (const std::string& path : source_.List("rules")) {
    std::string name = path.substr(path.rfind('/') + 1);
    if (name.ends_with(".yaml") && name[0] != '_') files.push_back(path);
  }
  // The family's own file first (the common case reads one file), then the others.
  std::string own = "rules/" + model_type + ".yaml";
  std::stable_partition(files.begin(), files.end(), [&](const std::string& path) { return path == own; });
  std::vector<std::string> known;
  for (const std::string& path : files) {
    EP_ASSIGN_OR_RETURN(const RuleSet* set, Load(path));
    for (const std::string& type : set->model_types) {
      if (type == model_type) return set;
      known.push_back(type);
    }
  }
  std::sort(known.begin(), known.end());
  std::string message = "no built-in partition rules for model_type '" + model_type + "'";
  if (auto suggestion = SuggestClosest(model_type, known)) message += " (did you mean '" + *suggestion + "'?)";
  return Status::BadInput({"", "/model_type"}, message,
                          {"built-in rules exist for " + JoinQuoted(known), "write your own and pass --rules FILE"});
}

StatusOr<const RuleSet*> RuleLibrary::FromFile(const FileSystem& fs, const std::string& path, const Limits& limits,
                                               size_t max_rules) {
  std::string key = "file:" + path;
  if (auto it = sets_.find(key); it != sets_.end()) return it->second.get();
  EP_ASSIGN_OR_RETURN(const Presets* presets, GetPresets());
  EP_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path, limits.max_input_bytes));
  EP_ASSIGN_OR_RETURN(RuleSet set, ParseRuleSet(text, path, *presets, max_rules, limits));
  auto& slot = sets_[key];
  slot = std::make_unique<RuleSet>(std::move(set));
  return slot.get();
}

}  // namespace easyplan::rules
