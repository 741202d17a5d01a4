// In-process cost of planning one model on many meshes, as a mesh search does (issue 18: "one model
// re-planned on 100 meshes under 100 ms"): Llama-3.1-8B's template tree (examples/llama-3.1-8b,
// EasyDeL and HF layouts) matched once by MatchTree, then laid out by LayOutPlan on 100 meshes; next
// to BuildPlan on the same 100 meshes (matching every time), and to MatchTree alone. Also the planning
// part of scripts/bench's issue-4 validate (DeepSeek-V3's 92k-tensor HF tree, rules/deepseek_v3_hf.yaml,
// 2,048 devices, no plan entries kept): BuildPlan, and its two stages on their own.
#include <benchmark/benchmark.h>

#include <fstream>
#include <memory>
#include <sstream>

#include "core/document.h"
#include "core/file_system.h"
#include "core/json_parse.h"
#include "planner/lay_out_plan.h"
#include "planner/layout_links.h"
#include "planner/plan.h"
#include "planner/tree_matches.h"
#include "rules/rule_library.h"
#include "schemas/resolver.h"
#include "schemas/tree_builder.h"

namespace easyplan {
namespace {

// Everything a plan of one example model needs, built once per benchmark.
struct Model {
  schemas::ResolvedConfig resolved;
  ParamTree tree;
  std::vector<planner::LayoutLink> links;
  std::unique_ptr<rules::RuleLibrary> library;
  const rules::RuleSet* rules = nullptr;

  planner::MatchRequest Matching() const {
    return {.tree = &tree,
            .rules = rules,
            .presets = *library->GetPresets(),
            .config = &resolved.config,
            .links = &links,
            .logical_dims = *library->GetLogicalDims()};
  }
};

// `rules_file` (repo-relative) instead of the family's built-in rules when not empty.
StatusOr<std::unique_ptr<Model>> LoadModel(const std::string& name, Layout layout, const std::string& rules_file = "") {
  auto model = std::make_unique<Model>();
  schemas::SchemaSet schemas(schemas::DataSource::Embedded());
  std::ifstream in(std::string(EASYPLAN_SOURCE_DIR) + "/examples/" + name + "/config.json");
  std::ostringstream text;
  text << in.rdbuf();
  EP_ASSIGN_OR_RETURN(Document doc, ParseJsonDocument(text.str(), name));
  EP_ASSIGN_OR_RETURN(model->resolved,
                      schemas::ResolveConfig(schemas::ConfigInput{std::move(doc), std::nullopt, {}}, {}, schemas));
  EP_ASSIGN_OR_RETURN(const schemas::TreeTemplate* tree_template, schemas.Tree(model->resolved.family));
  schemas::TreeOptions options;
  options.layout = layout;
  EP_ASSIGN_OR_RETURN(model->tree, schemas::BuildParamTree(*tree_template, model->resolved.config, options));
  model->library = std::make_unique<rules::RuleLibrary>(schemas::DataSource::Embedded());
  if (rules_file.empty()) {
    EP_ASSIGN_OR_RETURN(model->rules, model->library->ForModelType(model->resolved.config["model_type"]));
  } else {
    EP_ASSIGN_OR_RETURN(
        model->rules,
        model->library->FromFile(RealFileSystem(), std::string(EASYPLAN_SOURCE_DIR) + "/" + rules_file, Limits{}));
  }
  if (model->rules->layout != layout) {
    schemas::TreeOptions expand;
    expand.include_buffers = true;
    EP_ASSIGN_OR_RETURN(std::vector<schemas::ExpandedTensor> expanded,
                        schemas::ExpandTreeTemplate(*tree_template, model->resolved.config, expand));
    EP_ASSIGN_OR_RETURN(model->links, planner::LinkHfToEasyDel(model->tree, expanded));
  }
  return model;
}

// 100 meshes over EasyDeL's five axes: 8 to 256 devices, tp 1-8, sp 1-2, dp 1-4, fsdp the rest.
std::vector<Mesh> HundredMeshes() {
  std::vector<Mesh> meshes;
  for (int64_t devices : {8, 16, 32, 64, 128, 256}) {
    for (int64_t tp : {1, 2, 4, 8}) {
      for (int64_t sp : {1, 2}) {
        for (int64_t dp : {1, 2, 4}) {
          if (meshes.size() == 100) return meshes;
          if (dp * tp * sp > devices) continue;
          Mesh mesh;
          mesh.axis_names = {"dp", "fsdp", "ep", "tp", "sp"};
          mesh.shape = {dp, devices / (dp * tp * sp), 1, tp, sp};
          meshes.push_back(std::move(mesh));
        }
      }
    }
  }
  return meshes;
}

void BM_MatchTree(benchmark::State& state, const std::string& name, Layout layout) {
  auto model = LoadModel(name, layout);
  if (!model.ok()) return state.SkipWithError(model.status().ToString().c_str());
  for (auto _ : state) {
    auto matches = planner::MatchTree((*model)->Matching());
    if (!matches.ok()) return state.SkipWithError(matches.status().ToString().c_str());
    benchmark::DoNotOptimize(matches);
  }
  state.counters["tensors"] = static_cast<double>((*model)->tree.tensors.size());
}

// The target: MatchTree once, then LayOutPlan on each of 100 meshes.
void BM_MatchOnceLayOut100Meshes(benchmark::State& state, const std::string& name, Layout layout) {
  auto model = LoadModel(name, layout);
  if (!model.ok()) return state.SkipWithError(model.status().ToString().c_str());
  const std::vector<Mesh> meshes = HundredMeshes();
  for (auto _ : state) {
    auto matches = planner::MatchTree((*model)->Matching());
    if (!matches.ok()) return state.SkipWithError(matches.status().ToString().c_str());
    for (const Mesh& mesh : meshes) {
      auto plan = planner::LayOutPlan(*matches, mesh, planner::UnevenMode::kReplicate);
      if (!plan.ok()) return state.SkipWithError(plan.status().ToString().c_str());
      benchmark::DoNotOptimize(plan);
    }
  }
  state.counters["meshes"] = static_cast<double>(meshes.size());
}

// The baseline: BuildPlan on each of the same 100 meshes, matching the tree every time.
void BM_BuildPlan100Meshes(benchmark::State& state, const std::string& name, Layout layout) {
  auto model = LoadModel(name, layout);
  if (!model.ok()) return state.SkipWithError(model.status().ToString().c_str());
  const std::vector<Mesh> meshes = HundredMeshes();
  const planner::MatchRequest matching = (*model)->Matching();
  for (auto _ : state) {
    for (const Mesh& mesh : meshes) {
      planner::PlanRequest request;
      request.tree = matching.tree;
      request.rules = matching.rules;
      request.presets = matching.presets;
      request.config = matching.config;
      request.logical_dims = matching.logical_dims;
      request.links = (*model)->links;
      request.mesh = mesh;
      auto plan = planner::BuildPlan(request);
      if (!plan.ok()) return state.SkipWithError(plan.status().ToString().c_str());
      benchmark::DoNotOptimize(plan);
    }
  }
  state.counters["meshes"] = static_cast<double>(meshes.size());
}

Mesh ValidateMesh() {
  Mesh mesh;
  mesh.axis_names = {"dp", "fsdp", "ep", "tp", "sp"};
  mesh.shape = {1, 256, 1, 8, 1};
  return mesh;
}

// What `validate --tree deepseek_v3_hf.json --rules rules/deepseek_v3_hf.yaml` plans (stage "both"),
// or only MatchTree ("match"), or only LayOutPlan on an existing match ("lay-out").
void BM_DeepSeekValidatePlan(benchmark::State& state, const std::string& stage) {
  auto model = LoadModel("deepseek-v3", Layout::kHf, "rules/deepseek_v3_hf.yaml");
  if (!model.ok()) return state.SkipWithError(model.status().ToString().c_str());
  const planner::MatchRequest matching = (*model)->Matching();
  auto matches = planner::MatchTree(matching);
  if (!matches.ok()) return state.SkipWithError(matches.status().ToString().c_str());
  for (auto _ : state) {
    if (stage == "match") {
      benchmark::DoNotOptimize(planner::MatchTree(matching));
    } else if (stage == "lay-out") {
      benchmark::DoNotOptimize(
          planner::LayOutPlan(*matches, ValidateMesh(), planner::UnevenMode::kReplicate, {.keep_params = false}));
    } else {
      planner::PlanRequest request;
      request.tree = matching.tree;
      request.rules = matching.rules;
      request.presets = matching.presets;
      request.config = matching.config;
      request.logical_dims = matching.logical_dims;
      request.mesh = ValidateMesh();
      request.keep_params = false;
      benchmark::DoNotOptimize(planner::BuildPlan(request));
    }
  }
  state.counters["tensors"] = static_cast<double>((*model)->tree.tensors.size());
  state.counters["kinds"] = static_cast<double>(matches->kinds().size());
}

int RegisterAll() {
  for (const char* stage : {"both", "match", "lay-out"}) {
    benchmark::RegisterBenchmark((std::string("BM_DeepSeekValidatePlan/") + stage).c_str(), BM_DeepSeekValidatePlan,
                                 std::string(stage))
        ->Unit(benchmark::kMillisecond);
  }
  for (auto [layout, suffix] : {std::pair{Layout::kEasyDel, "easydel"}, std::pair{Layout::kHf, "hf"}}) {
    const std::string n = std::string("llama-3.1-8b/") + suffix;
    benchmark::RegisterBenchmark(("BM_MatchTree/" + n).c_str(), BM_MatchTree, "llama-3.1-8b", layout)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("BM_MatchOnceLayOut100Meshes/" + n).c_str(), BM_MatchOnceLayOut100Meshes,
                                 "llama-3.1-8b", layout)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_BuildPlan100Meshes/" + n).c_str(), BM_BuildPlan100Meshes, "llama-3.1-8b", layout)
        ->Unit(benchmark::kMillisecond);
  }
  return 0;
}
const int kRegistered = RegisterAll();

}  // namespace
}  // namespace easyplan

BENCHMARK_MAIN();
