// Fuzzes config loading and resolution through the calls `easyplan resolve` makes
// (cli/config_input.h LoadConfigDocument, then schemas::ResolveConfig with the built-in schemas),
// the emitters of its output, and the parameter-tree template of the resolved family
// (cli/tree_source.h BuildTemplateTree, as `easyplan tree CONFIG` does). The input is config.json.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "cli/config_input.h"
#include "cli/tree_source.h"
#include "core/emit.h"
#include "schemas/resolver.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace easyplan;
  // The built-in schemas are parsed once and reused, as within one run of the binary.
  static schemas::SchemaSet* schema_set = new schemas::SchemaSet(schemas::DataSource::Embedded());

  MemFileSystem fs;
  fs.AddFile("model/config.json", std::string(reinterpret_cast<const char*>(data), size));
  std::istringstream in;
  std::ostringstream out, err;
  cli::Context ctx{fs, in, out, err, ""};
  ctx.limits.max_values = 100000;

  StatusOr<Document> config = cli::LoadConfigDocument(ctx, "model");
  fuzz::CheckBadInput(config.status());
  if (!config.ok()) return 0;
  for (auto profile : {schemas::DefaultsProfile::kAddBasic, schemas::DefaultsProfile::kInit}) {
    schemas::ConfigInput input{*config, std::nullopt, {}};
    schemas::ResolveOptions options;
    options.profile = profile;
    options.limits = ctx.limits;
    StatusOr<schemas::ResolvedConfig> resolved = schemas::ResolveConfig(input, options, *schema_set);
    fuzz::CheckBadInput(resolved.status());
    if (!resolved.ok()) continue;
    (void)EmitJson(resolved->config);
    (void)EmitYaml(resolved->provenance);
    if (profile != schemas::DefaultsProfile::kAddBasic) continue;
    cli::TreeRequest request;
    request.max_tensors = 20000;  // a fuzzed num_hidden_layers must not make every run slow
    for (Layout layout : {Layout::kEasyDel, Layout::kHf}) {
      request.layout = layout;
      StatusOr<ParamTree> tree = cli::BuildTemplateTree(*resolved, *schema_set, request);
      fuzz::CheckBadInput(tree.status());
      if (tree.ok()) fuzz::CheckBadInput(tree->Totals().status());
    }
  }
  return 0;
}
