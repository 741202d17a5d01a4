#include "api/cost.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "api/assumptions.h"
#include "api/check.h"
#include "api/memory_pipeline.h"
#include "api/test_models.h"
#include "tests/test_util.h"

namespace easyplan::api {
namespace {

CostOptions Train(const std::string& mesh, int64_t batch, int64_t seq, const std::string& hardware = "h100-sxm") {
  CostOptions options;
  options.plan.mesh.axes = mesh;
  options.memory.mode = "train";
  options.memory.batch = batch;
  options.memory.seq = seq;
  options.memory.hardware = hardware;
  return options;
}

TEST(CostTest, AMoeWhoseExpertsSitInTextConfigAssumesBalancedRouting) {
  // Llama 4 keeps num_local_experts under text_config: the assumption once read the top-level keys only and
  // was missing from its cost (the expert count is now ModelDims::experts, read where the dims are).
  const auto model = LoadExample("llama-4-scout");
  const std::vector<std::string> lines = StepAssumptions(*model, {.train = true, .priced = true});
  const bool said = std::any_of(lines.begin(), lines.end(),
                                [](const std::string& line) { return line.starts_with("balanced routing"); });
  EXPECT_TRUE(said);
}

TEST(CostTest, MemoryIsTheMemoryCommandsForTheSameSettings) {
  auto model = LoadExample("llama-3.1-8b", {.sets = {"gradient_checkpointing=nothing_saveable"}});
  for (const char* mesh : {"dp=1,fsdp=8,ep=1,tp=1,sp=1", "dp=2,fsdp=2,ep=1,tp=2,sp=1"}) {
    CostOptions options = Train(mesh, 16, 2048);
    options.pricing.microbatches = 2;
    auto cost = Cost(model, options);
    ASSERT_TRUE(cost.ok()) << cost.status().ToString();
    ASSERT_TRUE(cost->estimate);
    MemoryOptions memory = options.memory;
    memory.batch = 8;  // one microbatch
    auto expected = Memory(model, options.plan, memory);
    ASSERT_TRUE(expected.ok() && expected->report);
    ASSERT_EQ(cost->estimate->memory.devices.size(), expected->report->devices.size());
    for (size_t d = 0; d < expected->report->devices.size(); ++d) {
      EXPECT_EQ(cost->estimate->memory.devices[d].total, expected->report->devices[d].total) << mesh << " device " << d;
    }
    EXPECT_EQ(cost->estimate->fits, expected->report->fits);
  }
}

TEST(CostTest, DenseTrainingFlopsOnOneDeviceAreSixNTokensPlusAttention) {
  auto model = LoadExample("llama-3.1-8b");
  auto cost = Cost(model, Train("dp=1,fsdp=1,ep=1,tp=1,sp=1", 2, 1024));
  ASSERT_TRUE(cost.ok()) << cost.status().ToString();
  const StepEstimate& e = *cost->estimate;
  const int64_t tokens = 2 * 1024;
  // q.k and p.v: 2 x batch x heads x seq^2 x head_dim FLOPs each, per layer, no causal skipping.
  const int64_t attention = 32 * 2 * (2 * 2 * 32 * int64_t{1024} * 1024 * 128);
  EXPECT_EQ(e.step.step_flops, 6 * e.active_params * tokens + 3 * attention);
  // N: every matmul's parameters: Llama 3.1 8B's 8,030,261,248 less the input embedding lookup and the
  // 65 RMSNorm weights of 4096.
  EXPECT_EQ(e.active_params, 8'030'261'248 - 128'256 * 4096 - 65 * 4096);
  EXPECT_DOUBLE_EQ(e.model_flops, 6.0 * static_cast<double>(e.active_params) * tokens);
}

TEST(CostTest, MicrobatchesRepeatTheStepAndRecomputationAddsAForward) {
  auto model = LoadExample("llama-3.1-8b");
  auto one = Cost(model, Train("dp=1,fsdp=8,ep=1,tp=1,sp=1", 16, 1024));
  CostOptions split = Train("dp=1,fsdp=8,ep=1,tp=1,sp=1", 16, 1024);
  split.pricing.microbatches = 2;
  auto two = Cost(model, split);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(two->estimate->step.step_flops, one->estimate->step.step_flops);
  EXPECT_GT(two->estimate->step.communication_s, one->estimate->step.communication_s);  // gathers repeat
  auto remat = LoadExample("llama-3.1-8b", {.sets = {"gradient_checkpointing=nothing_saveable"}});
  auto full = Cost(remat, Train("dp=1,fsdp=8,ep=1,tp=1,sp=1", 16, 1024));
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->estimate->step.step_flops, one->estimate->step.step_flops / 3 * 4);
  EXPECT_GT(full->estimate->step.recompute_s, 0);
  EXPECT_EQ(one->estimate->step.recompute_s, 0);
}

TEST(CostTest, DecodeReadsTheKvCache) {
  auto model = LoadExample("llama-3.1-8b");
  CostOptions options = Train("dp=1,fsdp=1,ep=1,tp=8,sp=1", 8, 8192);
  options.memory.mode = "decode";
  auto decode = Cost(model, options);
  ASSERT_TRUE(decode.ok()) << decode.status().ToString();
  options.memory.seq = 1024;
  auto shorter = Cost(model, options);
  ASSERT_TRUE(shorter.ok());
  EXPECT_EQ(decode->estimate->tokens, 8);  // one token per sequence
  EXPECT_GT(decode->estimate->step.compute_s, shorter->estimate->step.compute_s);
}

// fp8 projections run at the profile's fp8 peak (twice bf16 on an H100) while attention's q.k and p.v
// stay bf16: the compute falls, by less than half, and the FLOPs and the MFU's bf16 peak do not change.
TEST(CostTest, Fp8HalvesTheProjectionsButNotAttention) {
  auto model = LoadExample("llama-3.1-8b");
  const CostOptions bf16 = Train("dp=1,fsdp=1,ep=1,tp=1,sp=1", 2, 4096);
  CostOptions fp8 = bf16;
  fp8.pricing.precision = "fp8";
  auto slow = Cost(model, bf16);
  auto fast = Cost(model, fp8);
  ASSERT_TRUE(slow.ok() && fast.ok()) << fast.status().ToString();
  const step::StepCost& a = slow->estimate->step;
  const step::StepCost& b = fast->estimate->step;
  EXPECT_EQ(a.step_flops, b.step_flops);
  EXPECT_LT(b.compute_s, a.compute_s);
  EXPECT_GT(b.compute_s, a.compute_s / 2);
  // MFU against the peak of the precision in use: faster in fp8, and still a share of the fp8 peak.
  EXPECT_GT(fast->estimate->tokens_per_s, slow->estimate->tokens_per_s);
  EXPECT_EQ(fast->estimate->mfu_peak, step::Precision::kFp8);
  EXPECT_EQ(slow->estimate->mfu_peak, step::Precision::kBf16);
  EXPECT_LT(fast->estimate->mfu, 1.0);
  EXPECT_NEAR(fast->estimate->mfu * fast->estimate->step.step_time_s * 1979e12, fast->estimate->model_flops,
              fast->estimate->model_flops * 1e-9);
  EXPECT_EQ(CostToJson(*fast)["precision"], "fp8");
  // A chip without fp8 matmuls, and a precision that is not one.
  CostOptions v5e = fp8;
  v5e.memory.hardware = "tpu-v5e";
  const std::string no_fp8 = Cost(model, v5e).status().ToString();
  EXPECT_NE(no_fp8.find("'tpu-v5e' has no fp8 matmuls"), std::string::npos) << no_fp8;
  fp8.pricing.precision = "fp9";
  const std::string typo = Cost(model, fp8).status().ToString();
  EXPECT_NE(typo.find("did you mean 'fp8'"), std::string::npos) << typo;
}

TEST(CostTest, OptionErrorsNameTheFlag) {
  auto model = LoadExample("llama-3.1-8b");
  CostOptions options = Train("dp=1,fsdp=8,ep=1,tp=1,sp=1", 6, 1024);
  options.memory.hardware.clear();
  EXPECT_NE(Cost(model, options).status().ToString().find("--hardware is required"), std::string::npos);
  options = Train("dp=1,fsdp=8,ep=1,tp=1,sp=1", 6, 1024);
  options.pricing.microbatches = 4;
  EXPECT_NE(Cost(model, options).status().ToString().find("not divisible by --microbatches 4"), std::string::npos);
  options = Train("dp=1,fsdp=8,ep=1,tp=1,sp=1", 8, 1024);
  options.pricing.decode = true;
  EXPECT_NE(Cost(model, options).status().ToString().find("--decode"), std::string::npos);
  options = Train("dp=1,fsdp=8,ep=1,tp=1,sp=1", 8, 1024, "h100-sxn");
  EXPECT_NE(Cost(model, options).status().ToString().find("h100-sxm"), std::string::npos);
}

// --torus gives a TPU slice's dims as the job got them: a 2x8x8 slice of 128 v5p chips has no full cube,
// so none of its dims wraps around, and its collectives cost more than on Cloud TPU's 4x4x8 for that count.
TEST(CostTest, AGivenTorusReplacesCloudTpusTopologyForTheSlice) {
  auto model = LoadExample("llama-3.1-8b");
  CostOptions options = Train("dp=1,fsdp=16,ep=1,tp=8,sp=1", 128, 2048, "tpu-v5p");
  auto cloud = Cost(model, options);
  options.pricing.torus = "2x8x8";
  auto given = Cost(model, options);
  ASSERT_TRUE(cloud.ok() && given.ok()) << cloud.status().ToString() << given.status().ToString();
  ASSERT_TRUE(cloud->estimate && given->estimate);
  EXPECT_GT(given->estimate->step.communication_s, cloud->estimate->step.communication_s);
  EXPECT_EQ(given->estimate->step.compute_s, cloud->estimate->step.compute_s);
  ASSERT_FALSE(given->estimate->topology.empty());
  EXPECT_NE(given->estimate->topology[0].find("is a 2x8x8 torus (as given), with no wraparound"), std::string::npos)
      << given->estimate->topology[0];
  EXPECT_NE(cloud->estimate->topology[0].find("4x4x8 torus (Cloud TPU's topology"), std::string::npos)
      << cloud->estimate->topology[0];
  EXPECT_EQ(ParseTorus("4x4x8").value(), (std::vector<int64_t>{4, 4, 8}));
  EXPECT_TRUE(ParseTorus("").value().empty());
  for (const char* bad : {"4x", "x4", "4xx4", "4X4", "-4x4", "4x4x4x4x4", "1234567x2"}) {
    EXPECT_FALSE(ParseTorus(bad).ok()) << bad;
  }
}

// A checkout (--schemas-dir) whose family file for `model_type` says its forward pass is missing: every
// bundled family has one, so this is how a family the forward structures cannot express looks.
std::string CheckoutWithoutForward(const std::string& model_type, const std::string& missing) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(::testing::TempDir()) / ("easyplan-no-forward-" + model_type);
  fs::remove_all(root);
  fs::create_directories(root);
  for (const char* dir : {"schemas", "rules"}) {
    fs::copy(fs::path(testing::SourceDir()) / dir, root / dir, fs::copy_options::recursive);
  }
  const fs::path family = root / "schemas/families" / (model_type + ".yaml");
  std::string text = testing::ReadTestFile(family.string());
  text = text.substr(0, text.find("\nnumeric_check:") + 1) + "numeric_check:\n  missing: \"" + missing + "\"\n";
  std::ofstream(family) << text;
  return root.string();
}

// A family without a reference forward pass: cost (and suggest, which prices through it) and check's
// numeric level name the trait its family file gives; check --level all runs the layout check alone.
TEST(CostTest, AFamilyWithoutAForwardNamesTheTraitItLacks) {
  Environment env = Environment::Real();
  env.schemas_dir = CheckoutWithoutForward("dbrx", "its experts are a test's (trait: test trait)");
  auto model = Model::Load(env, ConfigSource::Path(Example("dbrx-instruct")), {});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const Status cost = Cost(*model, Train("dp=1,fsdp=8,ep=1,tp=1,sp=1", 8, 1024)).status();
  EXPECT_EQ(cost.diag().message,
            "the step-time model has no reference forward pass for model_type 'dbrx': its experts are a test's "
            "(trait: test trait)");
  CheckOptions check;
  check.plan.mesh.axes = "dp=1,fsdp=4,ep=1,tp=2,sp=1";
  check.level = "numeric";
  const std::string numeric = Check(*model, check).status().ToString();
  EXPECT_NE(numeric.find("the numeric check has no reference forward pass for model_type 'dbrx': its experts are "
                         "a test's (trait: test trait)"),
            std::string::npos)
      << numeric;
  check.level = "all";
  auto both = Check(*model, check);
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_FALSE(both->numeric.has_value());
  EXPECT_NE(both->numeric_skipped.find("(trait: test trait)"), std::string::npos) << both->numeric_skipped;
  // The bundled dbrx family has one.
  EXPECT_TRUE(Cost(LoadExample("dbrx-instruct"), Train("dp=1,fsdp=8,ep=1,tp=1,sp=1", 8, 1024)).ok());
}

// cost's forward communication equals, kind by kind, what check measures executing the same tiny
// config on the same mesh, batch and sequence.
struct FamilyMesh {
  std::string example;
  std::string mesh;
  std::vector<std::string> sets;  ///< --set overrides of the example
};

// gtest prints a parameter with this instead of its raw bytes.
void PrintTo(const FamilyMesh& c, std::ostream* os) { *os << c.example << " on " << c.mesh; }

class CostMatchesCheckTest : public ::testing::TestWithParam<FamilyMesh> {};

TEST_P(CostMatchesCheckTest, ForwardCommunicationEqualsChecksKindByKind) {
  auto loaded = LoadExample(GetParam().example)->WithSets(GetParam().sets);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  std::shared_ptr<const Model> model = *loaded;
  CheckOptions check;
  check.plan.mesh.axes = GetParam().mesh;
  check.level = "numeric";
  auto run = Check(model, check);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_TRUE(run->numeric && run->numeric_setup) << "the plan has errors";
  ASSERT_TRUE(run->numeric->ok());
  const kernels::ModelDesc& tiny = run->numeric_setup->model;
  auto tiny_model = model->WithSets(run->numeric_setup->sets);
  ASSERT_TRUE(tiny_model.ok()) << tiny_model.status().ToString();
  CostOptions options = Train(GetParam().mesh, tiny.batch, tiny.seq);
  options.memory.mode = "prefill";
  auto cost = Cost(*tiny_model, options);
  ASSERT_TRUE(cost.ok()) << cost.status().ToString();
  ASSERT_TRUE(cost->estimate);
  const step::KindBytes& f = cost->estimate->step.forward;
  const kernels::CommLog& measured = run->numeric->comm;
  // Dense collectives to the byte; a routed one (the MoE's ragged all-to-all) at what balanced routing
  // moves, which check reports beside the bytes its own routing moved.
  EXPECT_EQ(f.all_gather, measured.ExpectedBytes(kernels::CollectiveKind::kAllGather));
  EXPECT_EQ(f.reduce_scatter, measured.ExpectedBytes(kernels::CollectiveKind::kReduceScatter));
  EXPECT_EQ(f.all_reduce, measured.ExpectedBytes(kernels::CollectiveKind::kAllReduce));
  EXPECT_EQ(f.all_to_all, measured.ExpectedBytes(kernels::CollectiveKind::kAllToAll));
  EXPECT_GT(f.Total(), 0);
}

std::vector<FamilyMesh> FamilyMeshes() {
  std::vector<FamilyMesh> cases;
  // One example of every forward structure of schemas/forwards.yaml, and of each family-file override: the
  // expert layouts (packed rows, per-expert modules, experts last), the expert loop, the sparsemixer and
  // DeepSeek-V2's softmax routing, greedy here and group-limited below.
  for (const char* example : {"llama-3.1-8b",
                              "qwen2.5-7b",
                              "mixtral-8x7b",
                              "qwen3-30b-a3b",
                              "deepseek-v3",
                              "gpt2",
                              "glm-4.5-air",
                              "falcon-40b",
                              "gpt-oss-20b",
                              "llama-4-scout",
                              "qwen3-next-80b-a3b",
                              "gemma-2-9b",
                              "gemma-3-4b",
                              "phi-3-mini",
                              "olmo-2-7b",
                              "exaone-4.0-32b",
                              "glm-4-9b-0414",
                              "starcoder2-7b",
                              "internlm2.5-7b",
                              "command-r7b",
                              "gpt-j-6b",
                              "pythia-6.9b",
                              "stablelm-2-1.6b",
                              "smollm3-3b",
                              "mistral-small-3.1-24b",
                              "dbrx-instruct",
                              "phi-3.5-moe",
                              "granite-3.1-1b-a400m",
                              "deepseek-v2-lite"}) {
    for (const char* mesh : {"dp=2,fsdp=2,ep=1,tp=2,sp=1", "dp=1,fsdp=4,ep=1,tp=2,sp=1", "dp=1,fsdp=2,ep=2,tp=2,sp=1",
                             "dp=1,fsdp=2,ep=1,tp=2,sp=2"}) {
      // GPT-2's 50,257-entry vocabulary divides no tp > 1 (logical-indivisible): padded to 50,304, as
      // nanoGPT pads it.
      std::vector<std::string> sets;
      if (std::string(example) == "gpt2") sets.push_back("vocab_size=50304");
      cases.push_back({example, mesh, sets});
    }
  }
  for (const char* mesh : {"dp=2,fsdp=2,ep=1,tp=2,sp=1", "dp=1,fsdp=2,ep=2,tp=2,sp=1"}) {
    cases.push_back({"deepseek-v2-lite", mesh, {"topk_method=group_limited_greedy", "n_group=4", "topk_group=2"}});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Families, CostMatchesCheckTest, ::testing::ValuesIn(FamilyMeshes()),
                         [](const ::testing::TestParamInfo<FamilyMesh>& param_info) {
                           std::string name = param_info.param.example + "_" + param_info.param.mesh;
                           if (param_info.param.example == "deepseek-v2-lite" && !param_info.param.sets.empty()) {
                             name += "_group_limited";
                           }
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace easyplan::api
