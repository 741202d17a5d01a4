// Fuzzes partition rule files (rules/rule_set.h ParseRuleSet, YAML or JSON) against the built-in
// presets (rules/_presets.yaml, embedded): patterns are compiled with RE2, specs checked for shape.
// Nothing may crash or hang on a pathological pattern; failures are BadInput.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "rules/rule_library.h"
#include "rules/rule_set.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace easyplan;
  static rules::RuleLibrary* library = new rules::RuleLibrary(schemas::DataSource::Embedded());
  static const rules::Presets* presets = [] {
    StatusOr<const rules::Presets*> loaded = library->GetPresets();
    fuzz::Check(loaded.ok(), "the built-in presets do not load");
    return *loaded;
  }();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  StatusOr<rules::RuleSet> set = rules::ParseRuleSet(text, "rules.yaml", *presets, /*max_rules=*/1000);
  fuzz::CheckBadInput(set.status());
  if (set.ok()) fuzz::Check(set->rules.size() <= 1000, "max_rules not applied");
  return 0;
}
