// Fuzzes the JSON and YAML document parsers (core/json_parse.h, core/yaml_parse.h) and the emitters
// that write their values back (core/emit.h): parsing never crashes and fails only with BadInput, and
// whatever parses (finite floats, valid UTF-8) survives EmitJson -> ParseJsonDocument and EmitYaml ->
// ParseYamlDocument unchanged, as emit.h promises.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/document.h"
#include "core/emit.h"
#include "core/json_parse.h"
#include "core/yaml_parse.h"
#include "tests/fuzz/fuzz_util.h"

namespace easyplan::fuzz {
namespace {

void CheckRoundTrips(const Json& root) {
  if (!RoundTrippable(root)) return;
  Limits limits;
  StatusOr<Document> json = ParseJsonDocument(EmitJson(root), "emitted.json", limits);
  Check(json.ok(), "EmitJson output does not parse as JSON");
  Check(json->root() == root, "EmitJson -> ParseJsonDocument changed the value");
  StatusOr<Document> yaml = ParseYamlDocument(EmitYaml(root), "emitted.yaml", limits);
  Check(yaml.ok(), "EmitYaml output does not parse as YAML");
  Check(yaml->root() == root, "EmitYaml -> ParseYamlDocument changed the value");
}

}  // namespace
}  // namespace easyplan::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace easyplan;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Limits limits;
  limits.max_values = 100000;  // keep each run fast; the limit's own path is still exercised
  StatusOr<Document> json = ParseJsonDocument(text, "fuzz.json", limits);
  fuzz::CheckBadInput(json.status());
  if (json.ok()) {
    (void)json->Locate("/a/0");
    fuzz::CheckRoundTrips(json->root());
  }
  StatusOr<Document> yaml = ParseYamlDocument(text, "fuzz.yaml", limits);
  fuzz::CheckBadInput(yaml.status());
  if (yaml.ok()) fuzz::CheckRoundTrips(yaml->root());
  return 0;
}
