// Fuzzes the Python module's `options` argument (api/python/module.cc): JSON text parsed as the module
// parses it, then applied to every command through the command table (api/command_table.h), the one
// vocabulary the CLI and Python share. The module's other input, a tree as JSON text, goes through
// ParseTreeJson, which the tree_json target fuzzes.
//
// Properties beyond "no crash": every failure is BadInput; options a command accepts convert to its
// option structs (Validate, Cost, Suggest, Report, ...) and pass or fail its own checks without a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "api/command_table.h"
#include "core/json_parse.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace easyplan;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  StatusOr<Document> doc = ParseJsonDocument(text, "<options>", Limits{});
  fuzz::CheckBadInput(doc.status());
  if (!doc.ok()) return 0;
  for (const std::string& command : api::CommandNames()) {
    api::CommandOptions options = api::DefaultOptions(command);
    const Status applied = api::ApplyOptions(command, doc->root(), &options);
    fuzz::CheckBadInput(applied);
    if (!applied.ok()) continue;
    (void)options.Validate();
    (void)options.Cost();
    (void)options.Suggest();
    (void)options.Report();
    (void)options.Check();
    (void)options.Export();
    fuzz::CheckBadInput(api::CheckCommandOptions(**api::FindCommand(command), options).status());
  }
  return 0;
}
