// Fuzzes YAML anchors and aliases through the three YAML files a user hands easyplan: an overrides
// file (`--overrides`: LoadOverridesDocument, then resolved over gpt2's config with the built-in schemas,
// as api::Model does), a hardware profile (`--hardware FILE`: LoadHardwareProfile) and a rule file
// (`--rules FILE`: ParseRuleSet, as RuleLibrary::FromFile calls it). Issue 44 item 1: aliases were
// bounded in values, not bytes, so a 20 MB anchor used 100 times took 11.4 GB.
//
// The input limit is 16 KiB here (instead of 64 MiB), so inputs of a few KiB reach the bound on the
// expanded document (core/yaml_parse.h) the way a 20 MB file reaches the default one, and an input that
// expands as far as it may costs each of the four readers milliseconds (at 64 KiB, a billion-laughs
// seed took 0.3 s of CPU, and timed out on a loaded machine).
//
// Properties beyond "no crash": every failure is bad input. A document that parses holds at most
// limits.max_input_bytes bytes of strings and paths (JSON pointers) once its aliases are expanded, and
// at most limits.max_values values; an accepted hardware profile has a name.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/config_input.h"
#include "api/environment.h"
#include "api/hardware.h"
#include "core/document.h"
#include "core/file_system.h"
#include "core/json_parse.h"
#include "core/json_pointer.h"
#include "core/yaml_parse.h"
#include "rules/rule_library.h"
#include "rules/rule_set.h"
#include "schemas/resolver.h"
#include "tests/fuzz/fuzz_util.h"

namespace easyplan::fuzz {
namespace {

Limits FuzzLimits() {
  Limits limits;
  limits.max_input_bytes = size_t{16} << 10;
  limits.max_values = 100000;
  return limits;
}

/// A lower bound of what the parser counts against max_input_bytes: each value's JSON pointer and each
/// string's bytes (numbers, booleans and nulls had text too, and a duplicate key's first value was
/// counted before the last replaced it). Also counts the values.
void Measure(const Json& value, std::string& pointer, size_t* bytes, size_t* values) {
  *bytes += pointer.size();
  ++*values;
  if (value.is_string()) *bytes += value.get_ref<const std::string&>().size();
  if (value.is_array()) {
    size_t index = 0;
    for (const Json& item : value) {
      const size_t parent = pointer.size();
      AppendPointerIndex(pointer, index++);
      Measure(item, pointer, bytes, values);
      pointer.resize(parent);
    }
  }
  if (value.is_object()) {
    for (const auto& [key, item] : value.items()) {
      const size_t parent = pointer.size();
      AppendPointerKey(pointer, key);
      Measure(item, pointer, bytes, values);
      pointer.resize(parent);
    }
  }
}

Document Gpt2Config() {
  RealFileSystem disk;
  StatusOr<std::string> text =
      disk.ReadFile(std::string(EASYPLAN_SOURCE_DIR) + "/examples/gpt2/config.json", size_t{1} << 20);
  Check(text.ok(), "cannot read examples/gpt2/config.json");
  StatusOr<Document> doc = ParseJsonDocument(*text, "gpt2/config.json");
  Check(doc.ok(), "examples/gpt2/config.json does not parse");
  return *doc;
}

}  // namespace
}  // namespace easyplan::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace easyplan;
  using namespace easyplan::fuzz;
  // Parsed once and reused, as within one run of the binary.
  static const Document* gpt2 = new Document(Gpt2Config());
  static schemas::SchemaSet* schema_set = new schemas::SchemaSet(schemas::DataSource::Embedded());
  static rules::RuleLibrary* library = new rules::RuleLibrary(schemas::DataSource::Embedded());
  static const rules::Presets* presets = [] {
    StatusOr<const rules::Presets*> loaded = library->GetPresets();
    Check(loaded.ok(), "the built-in presets do not load");
    return *loaded;
  }();
  const std::string text(reinterpret_cast<const char*>(data), size);
  const Limits limits = FuzzLimits();

  // The reader all three use.
  StatusOr<Document> doc = ParseYamlDocument(text, "fuzz.yaml", limits);
  CheckBadInput(doc.status());
  if (doc.ok()) {
    size_t bytes = 0, values = 0;
    std::string pointer;
    Measure(doc->root(), pointer, &bytes, &values);
    Check(bytes <= limits.max_input_bytes, "a YAML document expands past max_input_bytes");
    Check(values <= limits.max_values, "a YAML document expands past max_values");
  }

  auto files = std::make_shared<MemFileSystem>();
  files->AddFile("overrides.yaml", text);
  files->AddFile("profile.yaml", text);
  files->AddFile("rules.yaml", text);
  api::Environment env;
  env.fs = files;
  env.limits = limits;
  env.limits.max_layers = 64;  // gpt2 has 12; overrides may ask for more, which the resolver's work grows with
  env.warn = [](const Diag&) {};

  // --overrides.
  StatusOr<Document> overrides = api::LoadOverridesDocument(env, "overrides.yaml");
  CheckBadInput(overrides.status());
  if (overrides.ok()) {
    schemas::ConfigInput input{*gpt2, *overrides, {}};
    schemas::ResolveOptions options;
    options.limits = env.limits;
    CheckBadInput(schemas::ResolveConfig(input, options, *schema_set).status());
  }

  // --hardware FILE.
  StatusOr<step::HardwareProfile> profile = api::LoadHardwareProfile(env, "profile.yaml");
  CheckBadInput(profile.status());
  if (profile.ok()) Check(!profile->name.empty(), "an accepted profile without a name");

  // --rules FILE, parsed as RuleLibrary::FromFile parses it (the library keeps what it read by path).
  CheckBadInput(rules::ParseRuleSet(text, "rules.yaml", *presets, /*max_rules=*/1000, limits).status());
  return 0;
}
