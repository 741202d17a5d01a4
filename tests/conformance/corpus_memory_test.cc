// `easyplan memory` over every real config in ../shared/corpus, on two 8-device meshes, in both modes,
// through the library path the CLI uses (api/plan_inputs.h, api/memory_pipeline.h). Invariants:
//   - one row per device; parameters are the plan's bytes per device, to the byte;
//   - training: gradients in the parameters' dtype equal the parameters; adamw's float32 state is
//     8 bytes per element held; no KV cache; nothing_saveable keeps less than no checkpointing;
//   - serving: no gradients or optimizer state; the KV cache is the activation plan's cache per device,
//     and the devices together hold at least the whole cache;
//   - every total is the sum of its parts, the worst device has the largest, the verdict follows it.
// Skipped (with a message) when the corpus is absent.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "api/activation_pipeline.h"
#include "api/memory_pipeline.h"
#include "api/plan_inputs.h"
#include "core/file_system.h"
#include "planner/memory.h"
#include "planner/plan.h"
#include "tests/test_util.h"

namespace easyplan {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::string model, mesh, mode;
};

// gtest prints a parameter with this in test names, instead of its raw bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.model << " " << c.mode << " on " << c.mesh; }

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (const std::string& model : testing::CorpusModels()) {
    for (const char* mesh : {"dp=1,fsdp=8,ep=1,tp=1,sp=1", "dp=1,fsdp=4,ep=1,tp=2,sp=1"}) {
      for (const char* mode : {"train", "decode"}) cases.push_back({model, mesh, mode});
    }
  }
  return cases;
}

class CorpusMemoryTest : public ::testing::TestWithParam<Case> {};

TEST_P(CorpusMemoryTest, BreakdownHoldsItsInvariants) {
  EASYPLAN_SKIP_WITHOUT_CORPUS();
  const Case& c = GetParam();
  api::PlanOptions flags;
  flags.config.config = testing::CorpusDir() + "/" + c.model + "/config.json";
  flags.mesh.axes = c.mesh;
  auto inputs = api::LoadPlanInputs(api::Environment::Real(), flags, nullptr);
  ASSERT_TRUE(inputs.ok()) << inputs.status().ToString();
  auto plan = planner::BuildPlan(inputs->Request());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();

  api::MemoryOptions memory;
  memory.mode = c.mode;
  memory.batch = 8;
  // Within every corpus model's context (gpt2's learned positions end at 1024, issue 44).
  memory.seq = 512;
  if (c.mode == "decode") memory.max_length = 1024;
  const int64_t budget = int64_t{80} << 30;
  auto report = api::BuildMemoryReport(*inputs, *plan, memory, budget);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(static_cast<int64_t>(report->devices.size()), plan->mesh.NumDevices());

  // The cache the serving report should hold: the activation plan at --max-length.
  int64_t cache_per_device = 0, cache_global = 0;
  if (c.mode == "decode") {
    auto table = inputs->model->ActivationTable();
    ASSERT_TRUE(table.ok());
    api::ActivationOptions activation_flags;
    activation_flags.mode = "decode";
    activation_flags.batch = 8;
    activation_flags.seq = 1024;  // memory.max_length
    auto checked = api::Checked<api::ActivationOptions>::Of(activation_flags);
    ASSERT_TRUE(checked.ok()) << checked.status().ToString();
    auto cache = api::BuildActivations(*checked, **table, *inputs->presets, inputs->resolved(), inputs->mesh);
    ASSERT_TRUE(cache.ok()) << cache.status().ToString();
    cache_per_device = cache->cache_bytes_per_device;
    cache_global = cache->cache_bytes;
    ASSERT_GT(cache_per_device, 0);
  }

  int64_t elements = 0;  // parameter elements on device 0
  for (const planner::LayoutGroup& g : plan->groups) elements += g.tensors * (g.HeldBy(0) ? g.layout.ElementsOn(0) : 0);
  int64_t worst_total = 0;
  for (const planner::DeviceMemory& d : report->devices) {
    SCOPED_TRACE("device " + std::to_string(d.id));
    EXPECT_EQ(d.params, plan->device_bytes[static_cast<size_t>(d.id)]);
    EXPECT_EQ(d.total, d.params + d.grads + d.optimizer + d.activations + d.kv_cache + d.transient);
    EXPECT_GT(d.activations, 0);
    EXPECT_GE(d.transient, report->breakdown.logits);
    EXPECT_GT(report->breakdown.logits, 0);
    if (c.mode == "train") {
      EXPECT_EQ(d.grads, d.params);
      EXPECT_EQ(d.kv_cache, 0);
    } else {
      EXPECT_EQ(d.grads, 0);
      EXPECT_EQ(d.optimizer, 0);
      EXPECT_EQ(d.kv_cache, cache_per_device);
    }
    worst_total = std::max(worst_total, d.total);
  }
  if (c.mode == "train") {
    EXPECT_EQ(report->devices[0].optimizer, 8 * elements);
  }
  if (c.mode == "decode") {
    EXPECT_GE(cache_per_device * plan->mesh.NumDevices(), cache_global);
  }
  EXPECT_EQ(report->Worst().total, worst_total);
  EXPECT_EQ(report->fits, worst_total <= budget);

  if (c.mode == "train") {
    // Recomputation trades memory: nothing_saveable keeps less than no checkpointing.
    api::PlanOptions recomputing = flags;
    recomputing.config.sets.push_back("gradient_checkpointing=nothing_saveable");
    auto recompute_inputs = api::LoadPlanInputs(api::Environment::Real(), recomputing, nullptr);
    ASSERT_TRUE(recompute_inputs.ok()) << recompute_inputs.status().ToString();
    auto recompute = api::BuildMemoryReport(*recompute_inputs, *plan, memory, budget);
    ASSERT_TRUE(recompute.ok());
    EXPECT_LT(recompute->devices[0].activations, report->devices[0].activations);
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusMemoryTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           const Case& c = param_info.param;
                           std::string name = c.model + "_" + c.mesh + "_" + c.mode;
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name.empty() ? std::string("none") : name;
                         });

}  // namespace
}  // namespace easyplan
