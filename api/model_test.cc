#include "api/model.h"

#include <gtest/gtest.h>

#include <thread>

#include "api/command_table.h"
#include "api/plan_inputs.h"
#include "api/test_models.h"
#include "core/emit.h"
#include "tests/test_util.h"

namespace easyplan::api {
namespace {

PlanOptions OptionsForMesh(const std::string& mesh) {
  PlanOptions options;
  options.mesh.axes = mesh;
  return options;
}

TEST(ModelTest, KeepsEachTreeAndRuleSetAfterFirstUse) {
  auto model = LoadExample("llama-3.1-8b");
  TreeSpec spec;
  auto first = model->Tree(spec);
  auto again = model->Tree(spec);
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_EQ(first->get(), again->get());  // computed once
  spec.dtype = DType::kFloat32;
  auto float32 = model->Tree(spec);
  ASSERT_TRUE(float32.ok());
  EXPECT_NE(first->get(), float32->get());  // another dtype is another tree
  EXPECT_EQ(float32->get()->tensors[0].dtype, DType::kFloat32);
  EXPECT_EQ(*model->Rules("builtin", 100), *model->Rules("builtin", 100));
}

TEST(ModelTest, PlanningAnotherMeshReusesTheMeshFreeStages) {
  auto model = LoadExample("mixtral-8x7b");
  PlanOptions hf = OptionsForMesh("dp=1,fsdp=2,ep=2,tp=2,sp=1");
  hf.tree.layout = "hf";
  auto a = PreparePlan(model, hf);
  hf.mesh.axes = "dp=1,fsdp=8,ep=1,tp=1,sp=1";
  auto b = PreparePlan(model, hf);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString();
  EXPECT_EQ(a->tree.get(), b->tree.get());
  EXPECT_EQ(a->links.get(), b->links.get());  // the HF -> EasyDeL links are built once
  EXPECT_FALSE(a->links->empty());
  EXPECT_NE(a->mesh.ToString(), b->mesh.ToString());
}

TEST(ModelTest, RuleMatchesAreKeptPerTreeAndPlansEqualBuildPlan) {
  auto model = LoadExample("mixtral-8x7b");
  PlanOptions hf = OptionsForMesh("dp=1,fsdp=2,ep=2,tp=2,sp=1");
  hf.tree.layout = "hf";
  auto a = PreparePlan(model, hf);
  hf.mesh.axes = "dp=1,fsdp=8,ep=1,tp=1,sp=1";
  auto b = PreparePlan(model, hf);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString();
  auto matches_a = model->Matches(a->tree_spec, a->tree, *a->rules, a->links);
  auto matches_b = model->Matches(b->tree_spec, b->tree, *b->rules, b->links);
  ASSERT_TRUE(matches_a.ok() && matches_b.ok()) << matches_a.status().ToString();
  EXPECT_EQ(matches_a->get(), matches_b->get());  // matched once for both meshes
  for (const PlanInputs* inputs : {&*a, &*b}) {
    auto cached = inputs->Build();
    auto direct = planner::BuildPlan(inputs->Request());
    ASSERT_TRUE(cached.ok() && direct.ok()) << cached.status().ToString();
    EXPECT_EQ(cached->device_bytes, direct->device_bytes);
    ASSERT_EQ(cached->params.size(), direct->params.size());
    for (size_t i = 0; i < cached->params.size(); ++i) {
      EXPECT_EQ(cached->params[i].spec.ToString(), direct->params[i].spec.ToString()) << i;
    }
    ASSERT_EQ(cached->findings.size(), direct->findings.size());
  }
}

TEST(ModelTest, ConstUseFromManyThreadsGivesOneAnswer) {
  auto model = LoadExample("qwen3-30b-a3b");
  const std::vector<std::string> meshes = {"dp=1,fsdp=8,ep=1,tp=1,sp=1", "dp=1,fsdp=2,ep=2,tp=2,sp=1",
                                           "dp=2,fsdp=2,ep=1,tp=2,sp=1", "dp=1,fsdp=4,ep=2,tp=1,sp=1"};
  std::vector<std::vector<int64_t>> expected;
  for (const std::string& mesh : meshes) {
    auto inputs = PreparePlan(model, OptionsForMesh(mesh));
    ASSERT_TRUE(inputs.ok());
    expected.push_back(planner::BuildPlan(inputs->Request())->device_bytes);
  }
  auto fresh = LoadExample("qwen3-30b-a3b");  // every stage is first computed by racing threads
  std::vector<std::vector<int64_t>> got(32);
  std::vector<const ParamTree*> trees(32);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i) {
    threads.emplace_back([&, i] {
      auto inputs = PreparePlan(fresh, OptionsForMesh(meshes[i % meshes.size()]));
      if (!inputs.ok()) return;
      trees[i] = inputs->tree.get();
      got[i] = planner::BuildPlan(inputs->Request())->device_bytes;
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i], expected[i % meshes.size()]) << i;
    EXPECT_EQ(trees[i], trees[0]);
  }
}

TEST(ModelTest, StrictWarningsFailTheLoadButStillReachTheCaller) {
  ConfigOptions options;
  options.strict = true;
  std::vector<Diag> diags;
  auto model = Model::Load(Environment::Real(), ConfigSource::Text(R"({"model_type": "llama", "hiden_size": 8})"),
                           options, &diags);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().diag().message.find("--strict"), std::string::npos);
  ASSERT_FALSE(diags.empty());
  EXPECT_EQ(diags[0].severity, Severity::kError);
  EXPECT_NE(diags[0].ToString().find("hiden_size"), std::string::npos);
}

TEST(ModelTest, ConfigTextAndPathResolveAlike) {
  auto from_path = LoadExample("gpt2");
  auto text = testing::ReadTestFile("examples/gpt2/config.json");
  auto from_text = Model::Load(Environment::Real(), ConfigSource::Text(text, "<dict>"), {});
  ASSERT_TRUE(from_text.ok());
  EXPECT_EQ((*from_text)->config(), from_path->config());
}

TEST(ModelTest, NoConfigMeansEasyDelDefaultsWithoutWarnings) {
  std::vector<Diag> diags;
  auto model = Model::Load(Environment::Real(), ConfigSource::None(), {}, &diags);
  ASSERT_TRUE(model.ok());
  EXPECT_FALSE((*model)->has_config());
  EXPECT_TRUE(diags.empty());
  EXPECT_TRUE((*model)->config().contains("partition_axis"));
}

TEST(CommandOptionsTest, UnknownNamesSuggestAndTypesAreChecked) {
  CommandOptions options;
  Status status = ApplyOptions("plan", Json{{"mseh", "fsdp=8"}}, &options);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.diag().message.find("did you mean 'mesh'"), std::string::npos);
  status = ApplyOptions("plan", Json{{"max_tensors", "many"}}, &options);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.diag().message.find("expected an integer"), std::string::npos);
  EXPECT_FALSE(ApplyOptions("plna", Json::object(), &options).ok());
  // Options that are not an object are the caller's mistake, not an internal error.
  status = ApplyOptions("plan", Json(":hm2m"), &options);
  EXPECT_EQ(status.kind(), ErrorKind::kBadInput);
  EXPECT_NE(status.ToString().find("options must be a JSON object of option names and values, found"),
            std::string::npos)
      << status.ToString();
}

TEST(CommandOptionsTest, MeshAndSetTakeTheirPythonShapes) {
  CommandOptions options;
  ASSERT_TRUE(ApplyOptions("plan", Json::parse(R"({"mesh": {"dp": 1, "fsdp": -1}, "set": {"rope_scaling.factor": 8},
                                           "rank": 3, "from": "ckpt", "strict": true})"),
                           &options)
                  .ok());
  EXPECT_EQ(options.plan.mesh.axes, "dp=1,fsdp=-1");
  EXPECT_EQ(options.plan.config.sets, std::vector<std::string>{"rope_scaling.factor=8"});
  EXPECT_EQ(options.rank, 3);
  EXPECT_EQ(options.plan.tree.checkpoint, "ckpt");
  EXPECT_TRUE(options.plan.config.strict);
}

TEST(CommandOptionsTest, OneNamePerConceptInEveryCommand) {
  // The accelerator is `hardware`, the budget `max_memory`, in memory as in validate and cost.
  for (const char* command : {"memory", "validate", "cost", "report"}) {
    CommandOptions options;
    ASSERT_TRUE(ApplyOptions(command, Json{{"hardware", "h100-80g"}, {"max_memory", "80GiB"}}, &options).ok())
        << command;
  }
  CommandOptions plan;
  ASSERT_TRUE(ApplyOptions("plan", Json{{"rank", 5}}, &plan).ok());
  EXPECT_EQ(plan.rank, 5);
  // An old name is an error that names the new one.
  for (const auto& [command, old_name] : std::vector<std::pair<std::string, std::string>>{
           {"memory", "memory_per_device"}, {"memory", "device"}, {"plan", "device"}}) {
    CommandOptions options;
    Status status = ApplyOptions(command, Json{{old_name, "x"}}, &options);
    ASSERT_FALSE(status.ok()) << command << " " << old_name;
    EXPECT_NE(status.ToString().find("which is now"), std::string::npos) << status.ToString();
  }
}

TEST(CommandTableTest, ResolveIsWhatTheCliPrints) {
  auto model = LoadExample("llama-3.1-8b");
  auto spec = FindCommand("resolve");
  ASSERT_TRUE(spec.ok());
  const CommandOptions options = DefaultOptions("resolve");
  auto checked = CheckCommandOptions(**spec, options);
  ASSERT_TRUE(checked.ok());
  auto out = RunCommand(**spec, {model, nullptr}, *checked);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*spec)->document(*out, options), EmitJson(model->config()));
}

}  // namespace
}  // namespace easyplan::api
