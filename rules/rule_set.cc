#include "rules/rule_set.h"

#include <re2/re2.h>

#include "core/did_you_mean.h"
#include "core/document.h"
#include "core/json_pointer.h"
#include "core/yaml_parse.h"
#include "schemas/schema_reader.h"

namespace easyplan::rules {
namespace {

// Why RE2 refused a pattern that Python's `re` may accept.
std::string PatternHint(const std::string& pattern) {
  for (const char* lookaround : {"(?=", "(?!", "(?<=", "(?<!"}) {
    if (pattern.find(lookaround) != std::string::npos) {
      return "look-arounds are Python-only: RE2 matches in linear time and has none; express the condition "
             "with plain alternation, or order the rules so an earlier rule takes the excluded names";
    }
  }
  for (char digit = '1'; digit <= '9'; ++digit) {
    if (pattern.find(std::string("\\") + digit) != std::string::npos) {
      return "backreferences are Python-only and RE2 has none";
    }
  }
  return "patterns use RE2 syntax (https://github.com/google/re2/wiki/Syntax), which is Python's minus "
         "look-arounds and backreferences";
}

StatusOr<SpecSource> ParseSpec(const schemas::SchemaReader& reader, const Presets& presets, const Json& value,
                               const std::string& pointer) {
  SpecSource spec;
  spec.text = value.is_string() ? value.get<std::string>() : value.dump();
  if (value.is_string()) {
    const std::string& name = value.get<std::string>();
    if (presets.HasPreset(name)) {
      spec.preset = name;
      return spec;
    }
    std::string message = "unknown preset '" + name + "'";
    if (auto suggestion = SuggestClosest(name, presets.PresetNames()))
      message += " (did you mean '" + *suggestion + "'?)";
    message += "; a spec is a preset name or a list with one entry per dim, e.g. [[fsdp, sp], tp]";
    return reader.Error(pointer, message);
  }
  if (!value.is_array()) {
    return reader.Error(
        pointer, "expected a preset name or a list with one entry per dim, found " + std::string(JsonTypeName(value)));
  }
  for (size_t d = 0; d < value.size(); ++d) {
    const Json& entry = value[d];
    std::string entry_pointer = PointerToElement(pointer, d);
    if (entry.is_null()) {
      spec.dims.emplace_back(std::nullopt);
    } else if (entry.is_string()) {
      spec.dims.emplace_back(std::vector<std::string>{entry.get<std::string>()});
    } else if (entry.is_array()) {
      std::vector<std::string> names;
      for (const Json& name : entry) {
        if (!name.is_string()) {
          return reader.Error(entry_pointer, "a tuple entry holds axis names or tokens, found " + JsonForMessage(name) +
                                                 " (tuples cannot nest)");
        }
        names.push_back(name.get<std::string>());
      }
      spec.dims.emplace_back(std::move(names));
    } else {
      return reader.Error(entry_pointer, "a spec entry is null, an axis name, a token or a list of them, found " +
                                             JsonForMessage(entry));
    }
  }
  return spec;
}

}  // namespace

Status ParseRuleSpec(const schemas::SchemaReader& reader, const Presets& presets, const Json& entry,
                     const std::string& pointer, Rule& rule) {
  if (!entry.contains("spec")) return reader.Error(pointer, "missing required key 'spec'");
  EP_ASSIGN_OR_RETURN(rule.spec, ParseSpec(reader, presets, entry["spec"], pointer + "/spec"));
  auto cases = entry.find("cases");
  if (cases == entry.end()) return Status();
  if (!cases->is_array()) return reader.Error(pointer + "/cases", "expected a list of {when, spec}");
  for (size_t c = 0; c < cases->size(); ++c) {
    std::string case_pointer = PointerToElement(pointer + "/cases", c);
    EP_RETURN_IF_ERROR(reader.CheckKeys((*cases)[c], case_pointer, {"when", "spec"}));
    EP_ASSIGN_OR_RETURN(schemas::Expression when, reader.RequiredExpr((*cases)[c], case_pointer, "when"));
    if (!(*cases)[c].contains("spec")) return reader.Error(case_pointer, "missing required key 'spec'");
    EP_ASSIGN_OR_RETURN(SpecSource spec, ParseSpec(reader, presets, (*cases)[c]["spec"], case_pointer + "/spec"));
    rule.cases.push_back({std::move(when), std::move(spec)});
  }
  return Status();
}

StatusOr<RuleSet> ParseRuleSet(std::string_view text, const std::string& path, const Presets& presets, size_t max_rules,
                               const Limits& limits) {
  EP_ASSIGN_OR_RETURN(Document doc, ParseYamlDocument(text, path, limits));
  return ParseRuleSet(doc, presets, max_rules);
}

StatusOr<RuleSet> ParseRuleSet(const Document& doc, const Presets& presets, size_t max_rules) {
  schemas::SchemaReader reader(doc);
  const Json& root = doc.root();
  EP_RETURN_IF_ERROR(reader.CheckKeys(root, "", {"layout", "model_types", "rules", "doc"}));
  RuleSet set;
  set.source = doc.file();
  set.duplicate_keys = doc.DuplicateKeyWarnings();
  EP_ASSIGN_OR_RETURN(std::string layout, reader.String(root, "", "layout", false));
  if (!layout.empty()) {
    std::optional<Layout> parsed = ParseLayout(layout);
    if (!parsed) return reader.Error("/layout", "expected 'easydel' or 'hf', found '" + layout + "'");
    set.layout = *parsed;
  }
  if (auto it = root.find("model_types"); it != root.end()) {
    if (!it->is_array()) return reader.Error("/model_types", "expected a list of model_type names");
    for (const Json& name : *it) {
      if (!name.is_string())
        return reader.Error("/model_types", "expected a model_type name, found " + JsonForMessage(name));
      set.model_types.push_back(name.get<std::string>());
    }
  }
  auto rules = root.find("rules");
  if (rules == root.end() || !rules->is_array()) {
    return reader.Error(rules == root.end() ? "" : "/rules", "expected 'rules': an ordered list of {match, spec}");
  }
  if (rules->size() > max_rules) {
    return reader.Error("/rules", "the file has " + std::to_string(rules->size()) + " rules, more than the limit of " +
                                      std::to_string(max_rules) + " (raise it with --max-rules)");
  }
  for (size_t i = 0; i < rules->size(); ++i) {
    const Json& entry = (*rules)[i];
    std::string pointer = PointerToElement("/rules", i);
    EP_RETURN_IF_ERROR(reader.CheckKeys(entry, pointer, {"match", "spec", "cases", "note"}));
    Rule rule;
    rule.loc = doc.Locate(pointer);
    rule.loc.pointer.clear();
    EP_ASSIGN_OR_RETURN(rule.pattern, reader.String(entry, pointer, "match", true));
    RE2::Options options;
    options.set_log_errors(false);
    RE2 compiled(rule.pattern, options);
    if (!compiled.ok()) {
      Status status = reader.Error(pointer + "/match", "invalid pattern \"" + rule.pattern + "\": " + compiled.error());
      status.mutable_diag().notes.push_back(PatternHint(rule.pattern));
      return status;
    }
    EP_RETURN_IF_ERROR(ParseRuleSpec(reader, presets, entry, pointer, rule));
    EP_ASSIGN_OR_RETURN(rule.note, reader.String(entry, pointer, "note", false));
    set.rules.push_back(std::move(rule));
  }
  return set;
}

}  // namespace easyplan::rules
