// Fuzzes config loading and resolution through the calls `easyplan resolve` makes
// (api/config_input.h LoadConfigDocument, then schemas::ResolveConfig with the built-in schemas),
// the emitters of its output, and the parameter-tree template of the resolved family
// (api/tree_source.h BuildTemplateTree, as `easyplan tree CONFIG` does). The input is config.json.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "api/config_input.h"
#include "api/tree_source.h"
#include "core/emit.h"
#include "schemas/resolver.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace easyplan;
  // The built-in schemas are parsed once and reused, as within one run of the binary.
  static schemas::SchemaSet* schema_set = new schemas::SchemaSet(schemas::DataSource::Embedded());

  auto fs = std::make_shared<MemFileSystem>();
  fs->AddFile("model/config.json", std::string(reinterpret_cast<const char*>(data), size));
  api::Environment env;
  env.fs = fs;
  env.limits.max_values = 100000;

  StatusOr<Document> config = api::LoadConfigDocument(env, "model");
  fuzz::CheckBadInput(config.status());
  if (!config.ok()) return 0;
  for (auto profile : {schemas::DefaultsProfile::kAddBasic, schemas::DefaultsProfile::kInit}) {
    schemas::ConfigInput input{*config, std::nullopt, {}};
    schemas::ResolveOptions options;
    options.profile = profile;
    options.limits = env.limits;
    StatusOr<schemas::ResolvedConfig> resolved = schemas::ResolveConfig(input, options, *schema_set);
    fuzz::CheckBadInput(resolved.status());
    if (!resolved.ok()) continue;
    (void)EmitJson(resolved->config);
    (void)EmitYaml(resolved->provenance);
    if (profile != schemas::DefaultsProfile::kAddBasic) continue;
    api::TreeRequest request;
    request.max_tensors = 20000;  // a fuzzed num_hidden_layers must not make every run slow
    for (Layout layout : {Layout::kEasyDel, Layout::kHf}) {
      request.layout = layout;
      StatusOr<const schemas::TreeTemplate*> tree_template = schema_set->Tree(resolved->family);
      if (!tree_template.ok() || *tree_template == nullptr) break;
      StatusOr<ParamTree> tree = api::BuildTemplateTree(**tree_template, resolved->config, request);
      fuzz::CheckBadInput(tree.status());
      if (tree.ok()) fuzz::CheckBadInput(tree->Totals().status());
    }
  }
  return 0;
}
