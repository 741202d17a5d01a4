// The collectives `cost` prices for named cases, pinned with their bytes (issue 33, docs/COST.md "Which
// collectives a step issues"). Every expected byte count is written from the published formula it stands
// for, not copied from a run: Megatron's sequence-parallel tensor parallelism (an all-gather and a
// reduce-scatter of b·s·h around attention and around the MLP), FSDP's weight gathers and gradient
// reduce-scatters, a decode step's small per-layer collectives, and EasyDeL's fused MoE path.

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "api/cost.h"
#include "api/test_models.h"

namespace easyplan::api {
namespace {

// Llama-3.1-8B (examples/llama-3.1-8b): hidden 4096, MLP 14336, 32 heads of 128, 8 kv heads, bf16.
constexpr int64_t kHidden = 4096, kInter = 14336, kKvWidth = 8 * 128, kBytes = 2;

// (phase, kind, axes, bytes per device) of one occurrence.
using Priced = std::tuple<std::string, std::string, std::string, int64_t>;

CostOptions Step(const std::string& mesh, const std::string& mode, int64_t batch, int64_t seq) {
  CostOptions options;
  options.plan.mesh.axes = mesh;
  options.memory.mode = mode;
  options.memory.batch = batch;
  options.memory.seq = seq;
  options.memory.hardware = "h100-sxm";
  return options;
}

// The collectives of one scope in the order the step runs them, one phase at a time.
std::vector<Priced> Collectives(const CostResult& cost, const std::string& scope, const std::string& phase) {
  std::vector<Priced> out;
  for (const step::PricedCollective& c : cost.estimate->step.collectives) {
    if (c.scope == scope && c.phase == phase) {
      out.emplace_back(c.phase, std::string(kernels::CollectiveName(c.kind)), c.axes, c.bytes_per_device);
    }
  }
  return out;
}

CostResult CostOf(const std::string& example, const CostOptions& options) {
  auto result = Cost(LoadExample(example), options);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->estimate.has_value());
  return *std::move(result);
}

// Ring all-gather / reduce-scatter of a full buffer of `bytes` over g devices: (g-1)/g of it each.
int64_t Ring(int64_t bytes, int64_t g) { return bytes * (g - 1) / g; }

TEST(CollectiveListTest, LlamaOnTp8IsMegatronSequenceParallelism) {
  const int64_t b = 8, s = 8192, t = 8;
  const CostResult cost = CostOf("llama-3.1-8b", Step("tp=8", "train", b, s));
  const int64_t bsh = Ring(b * s * kHidden * kBytes, t);
  // EasyDeL shards hidden states on tp (hidden_state_axis), so each RMSNorm's mean square over the hidden
  // dim is a local sum and an all-reduce of b·s values: small, and absent from Megatron, whose hidden
  // states are sharded on the sequence.
  const int64_t stats = 2 * Ring(b * s * kBytes, t);
  const std::vector<Priced> forward = {
      {"forward", "all-reduce", "tp", stats},   {"forward", "all-gather", "tp", bsh},
      {"forward", "reduce-scatter", "tp", bsh}, {"forward", "all-reduce", "tp", stats},
      {"forward", "all-gather", "tp", bsh},     {"forward", "reduce-scatter", "tp", bsh},
  };
  EXPECT_EQ(Collectives(cost, "layer 0", "forward"), forward);
  const std::vector<Priced> backward = {
      {"backward", "all-reduce", "tp", stats},   {"backward", "reduce-scatter", "tp", bsh},
      {"backward", "all-gather", "tp", bsh},     {"backward", "all-reduce", "tp", stats},
      {"backward", "reduce-scatter", "tp", bsh}, {"backward", "all-gather", "tp", bsh},
  };
  EXPECT_EQ(Collectives(cost, "layer 0", "backward"), backward);
  // Megatron (Korthikanti et al. 2022, section 4.2.2): 4 x b·s·h per layer and pass, as ring traffic.
  const double megatron = 4.0 * static_cast<double>(bsh) * 32;
  const double forward_bytes = static_cast<double>(cost.estimate->step.forward.Total());
  EXPECT_GE(forward_bytes, megatron);
  EXPECT_LE(forward_bytes, 1.3 * megatron);
}

TEST(CollectiveListTest, LlamaOnFsdp8GathersWeightsAndReduceScattersTheirGradients) {
  const int64_t f = 8;
  const CostResult cost = CostOf("llama-3.1-8b", Step("fsdp=8", "train", 8, 8192));
  std::vector<Priced> forward, backward;
  for (const int64_t weight : {kHidden * kHidden, kHidden * kKvWidth, kHidden * kKvWidth, kHidden * kHidden,
                               kHidden * kInter, kHidden * kInter, kInter * kHidden}) {
    const int64_t bytes = Ring(weight * kBytes, f);
    forward.emplace_back("forward", "all-gather", "fsdp", bytes);
    backward.emplace_back("backward", "reduce-scatter", "fsdp", bytes);  // the gradient
    backward.emplace_back("backward", "all-gather", "fsdp", bytes);      // gathered again for the backward
  }
  EXPECT_EQ(Collectives(cost, "layer 0", "forward"), forward);
  EXPECT_EQ(Collectives(cost, "layer 0", "backward"), backward);
  for (const step::PricedCollective& c : cost.estimate->step.collectives) {
    if (c.phase != "gradient") {
      EXPECT_TRUE(c.overlapped) << c.op << ": FSDP's collectives are prefetched";
    }
  }
}

TEST(CollectiveListTest, LlamaDecodeOnTp8MovesOnlyTheTokensHiddenStates) {
  const int64_t b = 16, t = 8;
  const CostResult cost = CostOf("llama-3.1-8b", Step("tp=8", "decode", b, 4096));
  const int64_t bh = Ring(b * kHidden * kBytes, t), stats = 2 * Ring(b * kBytes, t);
  const std::vector<Priced> forward = {
      {"forward", "all-reduce", "tp", stats},  {"forward", "all-gather", "tp", bh},
      {"forward", "reduce-scatter", "tp", bh}, {"forward", "all-reduce", "tp", stats},
      {"forward", "all-gather", "tp", bh},     {"forward", "reduce-scatter", "tp", bh},
  };
  EXPECT_EQ(Collectives(cost, "layer 0", "forward"), forward);
  for (const step::PricedCollective& c : cost.estimate->step.collectives) {
    EXPECT_LE(c.bytes_per_device, bh) << c.op << ": no weight moves in decode";
  }
}

TEST(CollectiveListTest, LlamaOnFsdp4Tp2GathersActivationsOverTpAndWeightShardsOverFsdp) {
  const int64_t b = 8, s = 8192, f = 4, t = 2;
  const CostResult cost = CostOf("llama-3.1-8b", Step("fsdp=4,tp=2", "train", b, s));
  const int64_t bsh = Ring(b / f * s * kHidden * kBytes, t), stats = 2 * Ring(b / f * s * kBytes, t);
  auto weight = [&](int64_t elements) {
    return Priced{"forward", "all-gather", "fsdp", Ring(elements / t * kBytes, f)};
  };
  const std::vector<Priced> forward = {
      {"forward", "all-reduce", "tp", stats},
      {"forward", "all-gather", "tp", bsh},
      weight(kHidden * kHidden),
      weight(kHidden * kKvWidth),
      weight(kHidden * kKvWidth),
      weight(kHidden * kHidden),
      {"forward", "reduce-scatter", "tp", bsh},
      {"forward", "all-reduce", "tp", stats},
      {"forward", "all-gather", "tp", bsh},
      weight(kHidden * kInter),
      weight(kHidden * kInter),
      weight(kInter * kHidden),
      {"forward", "reduce-scatter", "tp", bsh},
  };
  EXPECT_EQ(Collectives(cost, "layer 0", "forward"), forward);
}

TEST(CollectiveListTest, MixtralOnEp8MovesExpertOutputsAndNoExpertWeights) {
  // Mixtral-8x7B: hidden 4096, 8 experts, top-2. Tokens are replicated over ep (EasyDeL's batch axes are
  // fsdp and dp), so the fused path's entry moves nothing; each device sends its experts' rows of the
  // b·s·k routed rows to the 7 others (balanced routing); the backward sums the inputs' gradients over ep.
  const int64_t b = 8, s = 4096, k = 2, e = 8, g = 8;
  const CostResult cost = CostOf("mixtral-8x7b", Step("ep=8", "train", b, s));
  const int64_t rows = Ring(b * s * k * kHidden * kBytes, g);
  const std::vector<Priced> forward = {{"forward", "all-to-all", "ep", rows}};
  EXPECT_EQ(Collectives(cost, "layer 0", "forward"), forward);
  const std::vector<Priced> backward = {
      {"backward", "all-reduce", "ep", 2 * Ring(b * s * kHidden * kBytes, g)},
      {"backward", "all-reduce", "ep", 2 * Ring(b * s * e * kBytes, g)},
      {"backward", "all-to-all", "ep", rows},
  };
  EXPECT_EQ(Collectives(cost, "layer 0", "backward"), backward);
  for (const step::PricedCollective& c : cost.estimate->step.collectives) {
    EXPECT_EQ(c.op.find("/experts/"), std::string::npos) << c.op << ": an expert weight moved";
  }
}

// EasyDeL's fused path splits the experts over the folded expert axis inside shard_map, and
// use_expert_tensor_mode raises unless the expert mesh's tp is 1 (_moe_module.py, _sparse_moe_call): cost
// refuses what EasyDeL cannot run, naming the fold and the way out.
TEST(CollectiveListTest, FusedMoeRefusesMeshesEasyDelCannotRun) {
  const auto mixtral = LoadExample("mixtral-8x7b");
  const std::string fold = Cost(mixtral, Step("fsdp=16", "train", 16, 1024)).status().ToString();
  EXPECT_NE(fold.find("the 8 routed experts do not split over EasyDeL's folded expert axis of 16"), std::string::npos)
      << fold;
  EXPECT_NE(fold.find("fsdp_is_ep_bound=false"), std::string::npos) << fold;
  const auto unbound = mixtral->WithSets({"fsdp_is_ep_bound=false"});
  ASSERT_TRUE(unbound.ok());
  EXPECT_TRUE(Cost(*unbound, Step("fsdp=16", "train", 16, 1024)).ok());
  const auto tensor_mode = mixtral->WithSets({"use_expert_tensor_mode=true"});
  ASSERT_TRUE(tensor_mode.ok());
  const std::string tp = Cost(*tensor_mode, Step("tp=2", "train", 8, 1024)).status().ToString();
  EXPECT_NE(tp.find("use_expert_tensor_mode needs the expert mesh's tp of 1, found 2"), std::string::npos) << tp;
}

// A decode step reads the weights of the experts its tokens reach and no others: one token of
// Qwen3-30B-A3B (top-8 of 128 experts) reads 1/16 of the expert weights, sixteen tokens all of them
// (balanced routing), so the step is several times longer, where a routed share of every expert's
// weights would make it nearly as short.
TEST(CollectiveListTest, MoeDecodeReadsTheWeightsOfTheExpertsItsTokensReach) {
  const auto model = LoadExample("qwen3-30b-a3b");
  auto step = [&](int64_t batch) {
    CostOptions options = Step("fsdp=1", "decode", batch, 512);
    options.memory.max_memory = "1PiB";
    auto cost = Cost(model, options);
    EXPECT_TRUE(cost.ok()) << cost.status().ToString();
    return cost.ok() && cost->estimate ? cost->estimate->step.compute_s : 0.0;
  };
  const double one = step(1), sixteen = step(16);
  EXPECT_GT(sixteen, 5 * one);
  EXPECT_LT(sixteen, 16 * one);
}

// Serving engines speed decode up with tensor parallelism: each device reads 1/tp of the weights and
// of the KV cache, and a layer adds only small collectives (issue 33). The step time must not grow
// with tp, for the 8B from tp=1 to tp=8 and for the 70B in bf16 from tp=2 to tp=8.
double DecodeStep(const std::shared_ptr<const Model>& model, const std::string& mesh, int64_t batch) {
  auto cost = Cost(model, Step(mesh, "decode", batch, 4096));
  EXPECT_TRUE(cost.ok()) << cost.status().ToString();
  return cost.ok() && cost->estimate ? cost->estimate->step.step_time_s : 0;
}

TEST(CollectiveListTest, DecodeStepTimeDoesNotGrowWithTensorParallelism) {
  const auto small = LoadExample("llama-3.1-8b");
  double previous = DecodeStep(small, "tp=1", 16);
  for (const char* mesh : {"tp=2", "tp=4", "tp=8"}) {
    const double step = DecodeStep(small, mesh, 16);
    EXPECT_LE(step, previous) << "llama-3.1-8b on " << mesh;
    previous = step;
  }
  auto large = Model::Load(Environment::Real(),
                           ConfigSource::Path(testing::SourceDir() + "/tests/fixtures/cost/llama3.1-70b"), {});
  ASSERT_TRUE(large.ok()) << large.status().ToString();
  previous = DecodeStep(*large, "tp=2", 64);
  for (const char* mesh : {"tp=4", "tp=8"}) {
    const double step = DecodeStep(*large, mesh, 64);
    EXPECT_LE(step, previous) << "llama-3.1-70b on " << mesh;
    previous = step;
  }
}

}  // namespace
}  // namespace easyplan::api
