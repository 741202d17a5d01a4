// In-process cost of building parameter trees, next to the baseline of resolving the same config in
// the same run (BM_ResolveBaseline): the ratio is what the tree adds. DeepSeek-V3's HF layout (~92k
// tensors: 256 experts x 58 MoE layers, each FP8 weight with its scale) is the issue-3 target
// ("well under a second").
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "core/document.h"
#include "core/json_parse.h"
#include "schemas/resolver.h"
#include "schemas/tree_builder.h"

namespace easyplan {
namespace {

schemas::ResolvedConfig Resolve(const std::string& name, schemas::SchemaSet& set) {
  std::ifstream in(std::string(EASYPLAN_SOURCE_DIR) + "/examples/" + name + "/config.json");
  std::ostringstream text;
  text << in.rdbuf();
  auto doc = ParseJsonDocument(text.str(), name);
  schemas::ConfigInput input{std::move(*doc), std::nullopt, {}};
  return *schemas::ResolveConfig(input, {}, set);
}

void BM_ResolveBaseline(benchmark::State& state, const std::string& name) {
  for (auto _ : state) {
    schemas::SchemaSet set(schemas::DataSource::Embedded());
    benchmark::DoNotOptimize(Resolve(name, set));
  }
}

// Resolve + template load + tree, as one `easyplan tree` run does.
void BM_Tree(benchmark::State& state, const std::string& name, Layout layout) {
  int64_t tensors = 0;
  for (auto _ : state) {
    schemas::SchemaSet set(schemas::DataSource::Embedded());
    schemas::ResolvedConfig resolved = Resolve(name, set);
    const schemas::TreeTemplate* tree_template = *set.Tree(resolved.family);
    schemas::TreeOptions options;
    options.layout = layout;
    auto tree = schemas::BuildParamTree(*tree_template, resolved.config, options);
    if (!tree.ok()) state.SkipWithError(tree.status().ToString().c_str());
    tensors = static_cast<int64_t>(tree->tensors.size());
    benchmark::DoNotOptimize(tree);
  }
  state.counters["tensors"] = static_cast<double>(tensors);
}

int RegisterAll() {
  for (const char* name : {"llama-3.1-8b", "qwen3-30b-a3b", "deepseek-v3"}) {
    std::string n(name);
    benchmark::RegisterBenchmark(("BM_ResolveBaseline/" + n).c_str(), BM_ResolveBaseline, n)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_Tree/" + n + "/easydel").c_str(), BM_Tree, n, Layout::kEasyDel)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_Tree/" + n + "/hf").c_str(), BM_Tree, n, Layout::kHf)
        ->Unit(benchmark::kMillisecond);
  }
  return 0;
}
const int kRegistered = RegisterAll();

}  // namespace
}  // namespace easyplan

BENCHMARK_MAIN();
