#include "rules/auto_rules.h"

#include <re2/re2.h>

#include <set>
#include <utility>

#include "core/did_you_mean.h"
#include "core/number_literal.h"

namespace easyplan::rules {
namespace {

bool AllDigits(std::string_view part) {
  if (part.empty()) return false;
  for (char c : part) {
    if (!IsAsciiDigit(c)) return false;
  }
  return true;
}

}  // namespace

std::string AutoRulePattern(std::string_view path) {
  std::string pattern = "^(?:.*/)?";
  size_t start = 0;
  while (true) {
    const size_t slash = path.find('/', start);
    const std::string_view part = path.substr(start, slash == std::string_view::npos ? slash : slash - start);
    if (AllDigits(part)) {
      pattern += "\\d+";
    } else {
      // re.escape's role; for the [A-Za-z0-9_] of module and parameter names both leave the text as is.
      pattern += RE2::QuoteMeta(part);
    }
    if (slash == std::string_view::npos) break;
    pattern += '/';
    start = slash + 1;
  }
  return NormalizeTrailingDollar(pattern + "$");
}

std::string NormalizeTrailingDollar(std::string_view pattern) {
  if (!pattern.ends_with('$')) return std::string(pattern);
  for (std::string_view kept : {"(?:/.*)?$", "/.*$", "(?:/value)?$", "/value$"}) {
    if (pattern.ends_with(kept)) return std::string(pattern);
  }
  return std::string(pattern.substr(0, pattern.size() - 1)) + "(?:/.*)?$";
}

StatusOr<RuleSet> GenerateAutoRules(const std::vector<schemas::ExpandedTensor>& tensors, const ModuleKinds& kinds,
                                    const std::string& model_type, const std::string& source) {
  RuleSet set;
  set.layout = Layout::kEasyDel;
  set.model_types = {model_type};
  set.source = source;
  set.builtin = true;
  // (pattern, kind, parameter): the same pair again adds nothing (base_module.py:1272-1280).
  std::set<std::pair<std::string, std::string>> seen;
  for (const schemas::ExpandedTensor& tensor : tensors) {
    if (!tensor.in_easydel) continue;
    const std::string& path = tensor.easydel_name;
    if (tensor.module.empty()) {
      return Status::BadInput(tensor.loc, "tensor '" + path + "' declares no `module:`",
                              {"EasyDeL's automatic rules give a parameter the spec of the module that owns it; "
                               "the tree template must name that module's kind (rules/_module_kinds.yaml)"});
    }
    const ModuleKind* kind = kinds.Find(tensor.module);
    if (!kind) {
      std::string message = "tensor '" + path + "': unknown module kind '" + tensor.module + "'";
      if (auto suggestion = SuggestClosest(tensor.module, kinds.Names())) {
        message += " (did you mean '" + *suggestion + "'?)";
      }
      return Status::BadInput(tensor.loc, message, {"the kinds are those of rules/_module_kinds.yaml"});
    }
    const size_t slash = path.rfind('/');
    const std::string param = slash == std::string::npos ? path : path.substr(slash + 1);
    auto hook = kind->params.find(param);
    if (hook == kind->params.end()) continue;  // the hook names it not: the catch-all takes it
    std::string pattern = AutoRulePattern(path);
    if (!seen.emplace(pattern, kind->name + "/" + param).second) continue;
    Rule rule = hook->second;
    rule.pattern = std::move(pattern);
    rule.note = kind->name + ": " + kind->doc;
    rule.loc = tensor.loc;
    rule.loc.pointer.clear();
    set.rules.push_back(std::move(rule));
  }
  Rule catch_all;
  catch_all.pattern = ".*";
  catch_all.spec.text = "[]";
  catch_all.note = "catch-all: a parameter no hook names gets P() (easydel/infra/base_module.py:1284)";
  set.rules.push_back(std::move(catch_all));
  return set;
}

}  // namespace easyplan::rules
