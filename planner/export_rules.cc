#include "planner/export_rules.h"

#include <vector>

#include "core/json.h"

namespace easyplan::planner {
namespace {

// A JSON string is a YAML flow scalar: quotes and backslashes escaped alike.
std::string Quoted(const std::string& text) { return Json(text).dump(); }

std::string SpecText(const PartitionSpec& spec) {
  std::string out = "[";
  for (int d = 0; d < spec.size(); ++d) {
    if (d > 0) out += ", ";
    const PartitionSpec::Entry& entry = spec[d];
    if (entry.empty()) {
      out += "null";
    } else if (entry.size() == 1) {
      out += entry[0];
    } else {
      out += "[";
      for (size_t i = 0; i < entry.size(); ++i) out += (i > 0 ? ", " : "") + entry[i];
      out += "]";
    }
  }
  return out + "]";
}

}  // namespace

StatusOr<std::string> RuleFileExport(const Plan& plan, const rules::RuleSet& rules,
                                     const std::string& easydel_version) {
  // The first tensor each rule matched, in tree order.
  std::vector<const ParamPlan*> first(rules.rules.size(), nullptr);
  for (const ParamPlan& param : plan.params) {
    if (param.origin != SpecOrigin::kRule || param.rule < 0) continue;
    const auto r = static_cast<size_t>(param.rule);
    if (r < first.size() && first[r] == nullptr) first[r] = &param;
  }
  std::string out = "# " + (easydel_version.empty() ? "" : "EasyDeL " + easydel_version + ": ") + rules.source +
                    ", laid on mesh " + plan.mesh.ToString() + " (easyplan export --to rules; docs/RULES.md)\n";
  out += std::string("layout: ") + std::string(LayoutName(rules.layout)) + "\nrules:\n";
  for (size_t r = 0; r < rules.rules.size(); ++r) {
    const rules::Rule& rule = rules.rules[r];
    std::string spec;
    if (first[r] != nullptr) {
      // The spec as the tensor holds it: after the drop when the drop changed it.
      const ParamPlan& param = *first[r];
      spec = SpecText(param.effective.AllAxes() == param.spec.AllAxes() ? param.spec : param.effective);
    } else if (rule.spec.preset) {
      spec = *rule.spec.preset;
    } else {
      spec = rule.spec.text.empty() ? "[]" : rule.spec.text;  // JSON, as the rule file gave it
    }
    out += "  - {match: " + Quoted(rule.pattern) + ", spec: " + spec + "}";
    if (!rule.note.empty()) out += "  # " + rule.note;
    out += "\n";
  }
  return out;
}

}  // namespace easyplan::planner
