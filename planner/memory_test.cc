// The memory model's formulas on hand-sized inputs: every expected number is worked out in the comment
// beside it (docs/MEMORY.md has the formulas).
#include "planner/memory.h"

#include <gtest/gtest.h>

#include <memory>

#include "rules/rule_library.h"
#include "schemas/data_source.h"
#include "tests/test_util.h"

namespace easyplan::planner {
namespace {

Json SmallMemoryConfig() {
  Json config = Json::parse(R"({
    "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100
  })");
  config["partition_axis"] = testing::DefaultPartitionAxis();
  return config;
}

MemoryModel Model(bool vanilla = false) {
  MemoryModel model;
  model.dims.hidden = 64;
  model.dims.layers = 2;
  model.dims.vocab = 100;
  model.dims.heads = 4;
  model.dims.head_dim = 16;
  model.dims.intermediate = 128;
  model.vanilla_attention = vanilla;
  return model;
}

// 8 experts of width 32, top_k of them per token, run as `execution` says.
MemoryModel MoeModel(int64_t top_k, schemas::ExpertsExecution execution = schemas::ExpertsExecution::kFusedMoe) {
  MemoryModel model = Model();
  model.dims.experts = 8;
  model.dims.top_k = top_k;
  model.dims.moe_intermediate = 32;
  model.moe_execution = execution;
  return model;
}

ActivationTensor Tensor(std::string name, Shape shape, int64_t bytes_per_device) {
  ActivationTensor t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.dtype = DType::kBFloat16;
  t.bytes_per_device = bytes_per_device;
  return t;
}

// One layer's shards on a device: hidden 512 B, q 512, k 256, v 256, out 512, kv length 8; logits 800.
ActivationPlan Step() {
  ActivationPlan step;
  step.has_shapes = true;
  step.tensors = {
      Tensor("attention.query", Shape{2, 8, 4, 16}, 512), Tensor("attention.key", Shape{2, 8, 2, 16}, 256),
      Tensor("attention.value", Shape{2, 8, 2, 16}, 256), Tensor("attention.output", Shape{2, 8, 4, 16}, 512),
      Tensor("hidden_state", Shape{2, 8, 64}, 512),       Tensor("logits", Shape{2, 8, 100}, 800)};
  return step;
}

class MemoryTest : public ::testing::Test {
 protected:
  MemoryTest() : library_(schemas::DataSource::Embedded()), config_(SmallMemoryConfig()) {
    auto presets = library_.GetPresets();
    EXPECT_TRUE(presets.ok());
    auto set = rules::ParseRuleSet(
        "rules:\n"
        "  - {match: 'q_proj/kernel', spec: ColumnWise}\n"
        "  - {match: 'o_proj/kernel', spec: RowWise}\n"
        "  - {match: '.*', spec: Replicated}\n",
        "test_rules.yaml", **presets);
    EXPECT_TRUE(set.ok()) << set.status().ToString();
    rules_ = std::make_unique<rules::RuleSet>(std::move(*set));
    tree_.layout = Layout::kEasyDel;
    // q_proj [128, 256] and o_proj [256, 128] bf16 over fsdp=4 x tp=2: 4096 elements per device each;
    // the norm [128] f32 is replicated.
    tree_.tensors = {{"a/q_proj/kernel", Shape{128, 256}, DType::kBFloat16},
                     {"a/o_proj/kernel", Shape{256, 128}, DType::kBFloat16},
                     {"a/norm/scale", Shape{128}, DType::kFloat32}};
    PlanRequest request;
    request.tree = &tree_;
    request.rules = rules_.get();
    request.presets = *library_.GetPresets();
    request.config = &config_;
    request.mesh.axis_names = {"dp", "fsdp", "tp", "sp"};
    request.mesh.shape = {1, 4, 2, 1};
    auto plan = BuildPlan(request);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    plan_ = std::move(*plan);
    step_ = Step();
  }

  MemoryReport Compute(const MemoryOptions& options, bool vanilla = false) {
    MemoryInputs inputs{&plan_, &tree_, &step_, nullptr, Model(vanilla)};
    auto report = ComputeMemory(inputs, options);
    EXPECT_TRUE(report.ok()) << report.status().ToString();
    return *report;
  }

  rules::RuleLibrary library_;
  Json config_;
  std::unique_ptr<rules::RuleSet> rules_;
  ParamTree tree_;
  Plan plan_;
  ActivationPlan step_;
};

MemoryOptions Train(Optimizer optimizer = Optimizer::kAdamW) {
  MemoryOptions options;
  options.optimizer = optimizer;
  options.budget_per_device = int64_t{1} << 20;
  return options;
}

TEST(MemoryFormulaTest, LayerActivationsOfAFusedAttentionKernel) {
  // width(w) = 512 * w / 64: the intermediate is 1024 B. Attention keeps its output (512) and a float32
  // logsumexp per query row (256 elements / 16 = 16 rows, 64 B).
  auto layer = LayerActivationBytes(Model(), false, 512, 512, 256, 256, 512, 8, 2);
  ASSERT_TRUE(layer.ok());
  // full = 2h + qkv + attention + 2h + 3 * inter = 1024 + 1024 + 576 + 1024 + 3072
  EXPECT_EQ(layer->full, 6720);
  // dots = h + qkv + h (o_proj) + gate + up + down = 512 + 1024 + 512 + 2048 + 512
  EXPECT_EQ(layer->dots, 4608);
  EXPECT_EQ(layer->dots_no_batch, 4608);
}

TEST(MemoryFormulaTest, VanillaAttentionMaterialisesScoresAndProbabilities) {
  // scores: 256 query elements * 8 keys / 16 = 128 elements: float32 scores 512 B + bf16 probs 256 B.
  auto layer = LayerActivationBytes(Model(true), false, 512, 512, 256, 256, 512, 8, 2);
  ASSERT_TRUE(layer.ok());
  EXPECT_EQ(layer->full, 1024 + 1024 + (512 + 256 + 512) + 1024 + 3072);
  EXPECT_EQ(layer->dots, 512 + 1024 + (256 + 512) + 512 + 2560);  // QK^T and probs.V are dots
  EXPECT_EQ(layer->dots_no_batch, 4608);                          // ... with batch dims
}

TEST(MemoryFormulaTest, MoeLayerCountsRoutedCopiesAndSharedExperts) {
  MemoryModel model = MoeModel(2);
  model.dims.shared_intermediate = 32;
  auto layer = LayerActivationBytes(model, true, 512, 512, 256, 256, 512, 8, 2);
  ASSERT_TRUE(layer.ok());
  // router width(8) = 64; routed width(64) = 512, 3 each; shared width(32) = 256, 3 each; the routed
  // experts' outputs before the combine, width(2 x 64) = 1024; the shared experts' output h; combine h.
  EXPECT_EQ(layer->full, 1024 + 1024 + 576 + 1024 + (64 + 1536 + 768 + 1024 + 512 + 512));
  // dots: h + qkv + h (o_proj) + router + gate and up (routed, shared) + routed and shared down_proj.
  EXPECT_EQ(layer->dots, 512 + 1024 + 512 + (64 + 1024 + 512 + 1024 + 512));
}

TEST(MemoryFormulaTest, MoeWithoutSharedExpertsKeepsOnlyTheRoutedOutputs) {
  auto layer = LayerActivationBytes(MoeModel(2), true, 512, 512, 256, 256, 512, 8, 2);
  ASSERT_TRUE(layer.ok());
  EXPECT_EQ(layer->full, 1024 + 1024 + 576 + 1024 + (64 + 1536 + 1024 + 512));
  EXPECT_EQ(layer->dots, 512 + 1024 + 512 + (64 + 1024 + 1024));
}

// A module's own loop over experts (DBRX, PhiMoE) runs all 8 on every token: E copies, not top_k.
TEST(MemoryFormulaTest, ExpertLoopKeepsEveryExpertsCopies) {
  auto layer =
      LayerActivationBytes(MoeModel(2, schemas::ExpertsExecution::kExpertLoop), true, 512, 512, 256, 256, 512, 8, 2);
  ASSERT_TRUE(layer.ok());
  // routed width(8 x 32) = 2048, 3 each; outputs width(8 x 64) = 4096.
  EXPECT_EQ(layer->full, 1024 + 1024 + 576 + 1024 + (64 + 6144 + 4096 + 512));
  EXPECT_EQ(layer->dots, 512 + 1024 + 512 + (64 + 4096 + 4096));
}

// GptOssExperts at EasyDeL c14e25c9 keeps each token's gathered kernels; their expert width sits on tp
// as the attention output's heads do (out = 256 here, half the hidden state's 512: width x 4 per element).
TEST(MemoryFormulaTest, PerTokenGatherKeepsEachTokensGatheredKernels) {
  auto fused = LayerActivationBytes(MoeModel(2), true, 512, 512, 256, 256, 256, 8, 2);
  auto gathered = LayerActivationBytes(MoeModel(2, schemas::ExpertsExecution::kPerTokenGather), true, 512, 512, 256,
                                       256, 256, 8, 2);
  ASSERT_TRUE(fused.ok() && gathered.ok());
  // gate_up [2, 64, 64] and down [2, 32, 64] per token (3 x 2 x 32 x 64 = 12288 elements, x 4), the
  // gate_up bias [2, 64] (x 4) and the down bias [2, 64] at the hidden state's width (x 8).
  EXPECT_EQ(gathered->full - fused->full, 12288 * 4 + 128 * 4 + 128 * 8);
  EXPECT_EQ(gathered->dots, fused->dots);  // gathers are no dots: a dots policy recomputes them
}

// Llama4TextMoe at EasyDeL c14e25c9: 8 passes, each of every token through the experts at their width.
TEST(MemoryFormulaTest, ScoreMaskedLoopKeepsEveryPass) {
  auto layer = LayerActivationBytes(MoeModel(1, schemas::ExpertsExecution::kScoreMaskedLoop), true, 512, 512, 256, 256,
                                    512, 8, 2);
  ASSERT_TRUE(layer.ok());
  // router 64; per pass gate, up, product width(32) = 256 each and the scaled input and output (h); combine h.
  EXPECT_EQ(layer->full, 1024 + 1024 + 576 + 1024 + (64 + 8 * (768 + 1024) + 512));
  EXPECT_EQ(layer->dots, 512 + 1024 + 512 + (64 + 8 * (512 + 512)));
}

TEST(MemoryFormulaTest, LinearAttentionLayerKeepsItsProjectionsConvAndChunkStates) {
  // Qwen3-Next's Gated DeltaNet: 2 key heads and 4 value heads of 8; width(w) = 8w as above.
  MemoryModel model = Model();
  model.dims.linear_key_heads = 2;
  model.dims.linear_key_dim = 8;
  model.dims.linear_value_heads = 4;
  model.dims.linear_value_dim = 8;
  auto layer = LayerActivationBytes(model, false, 512, 512, 256, 256, 512, 8, 2, /*linear=*/true);
  ASSERT_TRUE(layer.ok());
  // in_proj_qkvz width(2 x 16 + 2 x 32) = 768 and in_proj_ba width(8) = 64 replace q/k/v; conv output
  // and its SiLU width(64) = 512 each; float32 chunk states width(4 x 8 x 8) x 4 / (64 tokens x 2) = 64;
  // the delta rule's output and the gated norm's, width(32) = 256 each.
  EXPECT_EQ(layer->full, 2 * 512 + 832 + (1024 + 64 + 512) + 2 * 512 + 3072);
  EXPECT_EQ(layer->dots, 512 + 832 + 512 + 2560);  // no attention dots: the delta rule is one kernel
  EXPECT_EQ(layer->dots_no_batch, layer->dots);
}

TEST(MemoryFormulaTest, OverflowIsAnErrorNotAWrongNumber) {
  auto layer = LayerActivationBytes(Model(), false, int64_t{1} << 60, 512, 256, 256, 512, 8, 2);
  ASSERT_FALSE(layer.ok());
  EXPECT_EQ(layer.status().diag().message, "memory: the activation bytes overflow a 64-bit integer");
}

TEST_F(MemoryTest, TrainingWithAdamW) {
  const MemoryReport r = Compute(Train());
  ASSERT_EQ(r.devices.size(), 8u);
  const DeviceMemory& d = r.devices[0];
  EXPECT_EQ(d.params, 2 * 4096 * 2 + 128 * 4);   // 16896
  EXPECT_EQ(d.grads, d.params);                  // in each parameter's dtype
  EXPECT_EQ(d.optimizer, 2 * (8192 + 128) * 4);  // m and v in float32
  // 2 layers x 6720 + embedding output and final norm (2 x 512); no KV cache in training.
  EXPECT_EQ(d.activations, 2 * 6720 + 1024);
  EXPECT_EQ(d.kv_cache, 0);
  // q_proj gathered over fsdp for the matmul: 128 x 256 / tp 2 x 2 B = 32768, twice (its gradient);
  // float32 logits 800 * 4 / 2 = 1600.
  EXPECT_EQ(r.breakdown.gathered_weight, 32768);
  EXPECT_EQ(r.breakdown.gathered_name, "a/q_proj/kernel");
  EXPECT_EQ(d.transient, 2 * 32768 + 1600);
  EXPECT_EQ(d.total, d.params + d.grads + d.optimizer + d.activations + d.transient);
  EXPECT_EQ(d.total, 181952);
  EXPECT_TRUE(r.fits);
  for (const DeviceMemory& other : r.devices) EXPECT_EQ(other.total, d.total);
  EXPECT_EQ(r.worst, 0);
}

TEST_F(MemoryTest, OptimizersDtypesAndMasterWeights) {
  EXPECT_EQ(Compute(Train(Optimizer::kLion)).devices[0].optimizer, (8192 + 128) * 4);
  EXPECT_EQ(Compute(Train(Optimizer::kSgd)).devices[0].optimizer, 0);
  // adafactor: q_proj shard [32, 128] -> 4096/128 + 4096/32 = 160 elements; o_proj [128, 32] likewise;
  // the 1-D norm keeps a full second moment (128).
  EXPECT_EQ(Compute(Train(Optimizer::kAdafactor)).devices[0].optimizer, (160 + 160 + 128) * 4);
  MemoryOptions options = Train();
  options.master_weights = true;
  options.grad_dtype = DType::kFloat32;
  options.opt_state_dtype = DType::kBFloat16;
  const DeviceMemory d = Compute(options).devices[0];
  EXPECT_EQ(d.grads, (8192 + 128) * 4);
  EXPECT_EQ(d.optimizer, 2 * (8192 + 128) * 2 + (8192 + 128) * 4);
}

TEST_F(MemoryTest, CheckpointPolicies) {
  MemoryOptions options = Train();
  options.policy = CheckpointPolicy::kEverythingSaveable;
  EXPECT_EQ(Compute(options).devices[0].activations, 2 * 6720 + 1024);
  // nothing_saveable: each layer keeps its input; one layer is recomputed in full during the backward.
  options.policy = CheckpointPolicy::kNothingSaveable;
  EXPECT_EQ(Compute(options).devices[0].activations, 2 * 512 + 6720 + 1024);
  options.policy = CheckpointPolicy::kCheckpointDots;
  EXPECT_EQ(Compute(options, true).devices[0].activations, 2 * 5376 + 7424 + 1024);
  options.policy = CheckpointPolicy::kDotsNoBatchDims;
  EXPECT_EQ(Compute(options, true).devices[0].activations, 2 * 4608 + 7424 + 1024);
}

TEST_F(MemoryTest, ServingHoldsTheCacheAndOneLayerAndNoTrainingState) {
  ActivationPlan cache;
  cache.cache_bytes_per_device = 12345;
  MemoryOptions options = Train();
  options.mode = Mode::kPrefill;
  MemoryInputs inputs{&plan_, &tree_, &step_, &cache, Model()};
  auto r = ComputeMemory(inputs, options);
  ASSERT_TRUE(r.ok());
  const DeviceMemory& d = r->devices[0];
  EXPECT_EQ(d.grads, 0);
  EXPECT_EQ(d.optimizer, 0);
  EXPECT_EQ(d.kv_cache, 12345);
  EXPECT_EQ(d.activations, 6720 + 1024);
  EXPECT_EQ(d.transient, 32768 + 1600);  // no gradient of the gathered weight
}

// suggest's compact report: only the worst device, the same one with the same figures and verdict.
TEST_F(MemoryTest, WorstOnlyKeepsTheWorstDeviceAndItsVerdict) {
  for (Optimizer optimizer : {Optimizer::kAdamW, Optimizer::kAdafactor}) {
    MemoryOptions options = Train(optimizer);
    options.budget_per_device = 181952;
    const MemoryReport every = Compute(options);
    options.worst_only = true;
    const MemoryReport worst = Compute(options);
    ASSERT_EQ(worst.devices.size(), 1u);
    EXPECT_EQ(every.devices.size(), 8u);
    EXPECT_EQ(worst.Worst().id, every.Worst().id);
    EXPECT_EQ(worst.Worst().total, every.Worst().total);
    EXPECT_EQ(worst.Worst().optimizer, every.Worst().optimizer);
    EXPECT_EQ(worst.fits, every.fits);
  }
}

TEST_F(MemoryTest, VerdictAgainstTheBudget) {
  MemoryOptions options = Train();
  options.budget_per_device = 181952;
  EXPECT_TRUE(Compute(options).fits);
  options.budget_per_device = 181951;
  EXPECT_FALSE(Compute(options).fits);
}

TEST(MemoryParseTest, PoliciesAndOptimizers) {
  EXPECT_EQ(ParseCheckpointPolicy(""), CheckpointPolicy::kNone);
  EXPECT_EQ(ParseCheckpointPolicy("dots_saveable"), CheckpointPolicy::kCheckpointDots);
  EXPECT_EQ(ParseCheckpointPolicy("dots_with_no_batch_dims_saveable"), CheckpointPolicy::kDotsNoBatchDims);
  EXPECT_EQ(ParseCheckpointPolicy("save_only_these_names"), std::nullopt);
  EXPECT_EQ(ParseOptimizer("adafactor"), Optimizer::kAdafactor);
  EXPECT_EQ(ParseOptimizer("adam"), std::nullopt);
}

TEST(MemoryParseTest, EveryPolicyAndOptimizerNameParsesBackToIt) {
  for (CheckpointPolicy policy :
       {CheckpointPolicy::kNone, CheckpointPolicy::kEverythingSaveable, CheckpointPolicy::kNothingSaveable,
        CheckpointPolicy::kCheckpointDots, CheckpointPolicy::kDotsNoBatchDims}) {
    EXPECT_EQ(ParseCheckpointPolicy(CheckpointPolicyName(policy)), policy);
  }
  for (Optimizer optimizer : kOptimizers) EXPECT_EQ(ParseOptimizer(OptimizerName(optimizer)), optimizer);
  // An alias parses but never names: the name is EasyDeL's own.
  EXPECT_EQ(CheckpointPolicyName(CheckpointPolicy::kCheckpointDots), "checkpoint_dots");
}

TEST(MemoryModelTest, MoeLayersFromMlpLayerTypesAndGpt2IsNotGated) {
  auto model_of = [](const char* text) {
    const Json config = Json::parse(text);
    auto dims = schemas::ModelDimsOf(config);
    EXPECT_TRUE(dims.ok()) << dims.status().ToString();
    return MemoryModelOf(*dims, config);
  };
  auto moe = model_of(R"({"hidden_size": 64, "num_hidden_layers": 4, "vocab_size": 10,
      "num_attention_heads": 4, "intermediate_size": 256, "hidden_act": "silu", "n_routed_experts": 8,
      "num_experts_per_tok": 2, "moe_intermediate_size": 32, "n_shared_experts": 2,
      "mlp_layer_types": ["dense", "sparse", "sparse", "sparse"], "attn_mechanism": "vanilla"})");
  ASSERT_TRUE(moe.ok());
  EXPECT_EQ(moe->dims.head_dim, 16);
  EXPECT_EQ(moe->dims.moe_layers, 3);
  EXPECT_EQ(moe->dims.shared_intermediate, 64);
  EXPECT_TRUE(moe->dims.gated_mlp);
  EXPECT_TRUE(moe->vanilla_attention);
  auto gpt2 = model_of(R"({"hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 10,
      "num_attention_heads": 4, "intermediate_size": 256, "activation_function": "gelu_new"})");
  ASSERT_TRUE(gpt2.ok());
  EXPECT_FALSE(gpt2->dims.gated_mlp);
  EXPECT_FALSE(gpt2->vanilla_attention);
  // A head_dim below 1 (hidden < heads) is 1; a MoE top-k of 0 is 1.
  auto narrow = model_of(R"({"hidden_size": 2, "num_hidden_layers": 2, "vocab_size": 10,
      "num_attention_heads": 4, "num_local_experts": 4})");
  ASSERT_TRUE(narrow.ok());
  EXPECT_EQ(narrow->dims.head_dim, 1);
  EXPECT_EQ(narrow->dims.top_k, 1);
  auto missing = model_of(R"({"hidden_size": 64})");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().diag().message, "config: memory needs a positive integer 'num_hidden_layers'");
}

}  // namespace
}  // namespace easyplan::planner
