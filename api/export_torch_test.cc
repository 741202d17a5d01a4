// export --to torch of per-expert tensors: each is a DTensor on the sub-mesh of the devices that hold
// its expert (docs/FORMATS.md), and its shards, on global ranks, tile the tensor exactly there.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "api/export.h"
#include "api/plan_pipeline.h"
#include "api/test_models.h"
#include "planner/export_dtensor.h"

namespace easyplan::api {
namespace {

TEST(ExportTorchTest, PerExpertTensorsAreDTensorsOnTheSubMeshThatHoldsTheirExpert) {
  auto model = LoadExample("mixtral-8x7b");
  ExportOptions options;
  options.plan.mesh.axes = "fsdp=4,ep=2,tp=2";
  options.to = "torch";
  auto exported = Export(model, options);
  ASSERT_TRUE(exported.ok()) << exported.status().ToString();
  ASSERT_FALSE(exported->failed);
  const Json doc = Json::parse(exported->text);
  PlanOptions plan_options = options.plan;
  plan_options.tree.layout = "hf";
  auto plan = PlanModel(model, plan_options);
  ASSERT_TRUE(plan.ok());
  std::map<std::string, const planner::ParamPlan*> by_name;
  for (const planner::ParamPlan& p : plan->plan.params) {
    by_name[plan->inputs.tree->tensors[static_cast<size_t>(p.tensor)].name] = &p;
  }
  int experts = 0;
  for (const Json& row : doc["params"]) {
    ASSERT_FALSE(row["placements"].is_null()) << row["name"];
    if (!row.contains("device_mesh")) continue;
    ++experts;
    const planner::LayoutGroup& group = plan->plan.groups[static_cast<size_t>(by_name.at(row["name"])->group)];
    // The sub-mesh's ranks are exactly the devices holding the expert, as many as its shape says.
    std::vector<int64_t> held;
    for (int64_t d = 0; d < plan->plan.mesh.NumDevices(); ++d) {
      if (group.HeldBy(d)) held.push_back(d);
    }
    EXPECT_EQ(row["device_mesh"]["ranks"].get<std::vector<int64_t>>(), held);
    int64_t size = 1;
    for (const Json& s : row["device_mesh"]["mesh_shape"]) size *= s.get<int64_t>();
    EXPECT_EQ(size, static_cast<int64_t>(held.size()));
    // Its distinct shards tile the tensor, and every rank named holds the expert.
    std::set<std::vector<int64_t>> offsets;
    int64_t elements = 0;
    for (const Json& shard : row["shards"]) {
      for (const Json& rank : shard["ranks"]) EXPECT_TRUE(group.HeldBy(rank.get<int64_t>()));
      if (!offsets.insert(shard["global_offset"].get<std::vector<int64_t>>()).second) continue;
      int64_t n = 1;
      for (const Json& d : shard["local_shape"]) n *= d.get<int64_t>();
      elements += n;
    }
    int64_t numel = 1;
    for (const Json& d : row["shape"]) numel *= d.get<int64_t>();
    EXPECT_EQ(elements, numel) << row["name"];
  }
  EXPECT_EQ(experts, 32 * 8 * 3);  // every w1, w2, w3 of 8 experts in 32 layers
}

// The estimate export refuses a torch artifact by (planner::TorchExportSizeEstimate, O(tensors)) stays
// near the real size, dense and per-expert, small and large meshes: the bulk is one line per rank.
TEST(ExportTorchTest, SizeEstimateIsCloseToTheArtifact) {
  for (const auto& [example, mesh] : std::vector<std::pair<std::string, std::string>>{
           {"llama-3.1-8b", "fsdp=8"}, {"llama-3.1-8b", "fsdp=256,tp=4"}, {"mixtral-8x7b", "fsdp=4,ep=2,tp=2"}}) {
    auto model = LoadExample(example);
    ExportOptions options;
    options.plan.mesh.axes = mesh;
    options.plan.tree.layout = "hf";
    options.layout_given = true;
    options.to = "torch";
    auto exported = Export(model, options);
    ASSERT_TRUE(exported.ok()) << exported.status().ToString();
    auto plan = PlanModel(model, options.plan);
    ASSERT_TRUE(plan.ok());
    const double estimate = static_cast<double>(planner::TorchExportSizeEstimate(plan->plan, *plan->inputs.tree));
    const double actual = static_cast<double>(exported->text.size());
    EXPECT_GT(estimate, 0.7 * actual) << example << " " << mesh;
    EXPECT_LT(estimate, 1.3 * actual) << example << " " << mesh;
  }
}

// Past --max-output-bytes the export is refused, naming the flag and the estimated size.
TEST(ExportTorchTest, RefusedPastTheOutputLimit) {
  Environment env = Environment::Real();
  env.limits.max_output_bytes = 10000;
  auto model = Model::Load(env, ConfigSource::Path(Example("llama-3.1-8b")), {});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ExportOptions options;
  options.plan.mesh.axes = "fsdp=8";
  options.to = "torch";
  auto exported = Export(*model, options);
  ASSERT_FALSE(exported.ok());
  EXPECT_NE(exported.status().ToString().find("the torch export would be about"), std::string::npos)
      << exported.status().ToString();
  EXPECT_NE(exported.status().ToString().find("raise it with --max-output-bytes N"), std::string::npos);
}

}  // namespace
}  // namespace easyplan::api
