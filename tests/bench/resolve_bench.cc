// In-process cost of `resolve` per bundled example, next to a baseline measured in the same run:
// parsing the same config.json alone (BM_ParseOnly). The ratio says what resolution adds on top of
// reading the file; scripts/bench also times the whole process against `easyplan --version`.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "core/document.h"
#include "core/json_parse.h"
#include "schemas/resolver.h"

namespace easyplan {
namespace {

std::string ReadExample(const std::string& name) {
  std::ifstream in(std::string(EASYPLAN_SOURCE_DIR) + "/examples/" + name + "/config.json");
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void BM_ParseOnly(benchmark::State& state, const std::string& name) {
  std::string text = ReadExample(name);
  for (auto _ : state) {
    auto doc = ParseJsonDocument(text, name);
    benchmark::DoNotOptimize(doc);
  }
}

// Schemas are parsed inside the loop, as every CLI invocation parses them once.
void BM_Resolve(benchmark::State& state, const std::string& name) {
  std::string text = ReadExample(name);
  for (auto _ : state) {
    auto doc = ParseJsonDocument(text, name);
    schemas::SchemaSet set(schemas::DataSource::Embedded());
    schemas::ConfigInput input{std::move(*doc), std::nullopt, {}};
    auto resolved = schemas::ResolveConfig(input, {}, set);
    if (!resolved.ok()) state.SkipWithError(resolved.status().ToString().c_str());
    benchmark::DoNotOptimize(resolved);
  }
}

const char* const kExamples[] = {"llama-3.1-8b", "mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v3",
                                 "gemma-2-9b",   "gemma-3-4b",   "gpt2"};

int RegisterAll() {
  for (const char* name : kExamples) {
    benchmark::RegisterBenchmark((std::string("BM_ParseOnly/") + name).c_str(), BM_ParseOnly, std::string(name))
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((std::string("BM_Resolve/") + name).c_str(), BM_Resolve, std::string(name))
        ->Unit(benchmark::kMicrosecond);
  }
  return 0;
}
const int kRegistered = RegisterAll();

}  // namespace
}  // namespace easyplan

BENCHMARK_MAIN();
