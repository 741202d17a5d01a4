#include "step/step_time.h"

#include <gtest/gtest.h>

#include "kernels/step_records.h"
#include "kernels/tiny_llama_test_util.h"

namespace easyplan::step {
namespace {

// Round figures, so expected times are easy to state: 1e12 FLOP/s, 1e12 B/s HBM, 1e10 B/s links.
step::HardwareProfile TestChip() {
  step::HardwareProfile hw;
  hw.name = "test-chip";
  hw.hbm_bytes = int64_t{16} << 30;
  hw.hbm_bandwidth = 1e12;
  hw.peak_flops_bf16 = 1e12;
  hw.fast = {"nvlink", 4, {}, 1e10, 1e-6};
  hw.network = {"infiniband", 0, {}, 1e9, 1e-5};
  return hw;
}

struct Priced {
  kernels::DryRunReport run;
  StepCost cost;
};

Priced Price(const kernels::ModelDesc& model, const std::vector<int64_t>& mesh, const StepOptions& options) {
  const ParamTree tree = kernels::LlamaTree(model);
  const planner::Plan plan = kernels::PlanTinyLlama(tree, kernels::kEasyDelAxes, mesh);
  auto run = kernels::DryRunForward(model, plan, tree);
  EXPECT_TRUE(run.ok()) << run.status().ToString();
  const kernels::StepRecordOptions records{.train = options.mode == Mode::kTrain};
  EXPECT_TRUE(kernels::AppendStepRecords(model, plan, tree, records, *run).ok());
  auto cost = PriceStep(*run, plan.mesh, model, TestChip(), options);
  EXPECT_TRUE(cost.ok()) << cost.status().ToString();
  return {std::move(*run), std::move(*cost)};
}

TEST(StepTimeTest, MicrobatchMeanIsTheMeanOfEveryField) {
  // DualPipe's pace is the mean of a device's two stages, field by field (PricePipeline).
  const StepCost::Microbatch a{1, 2, 3, 4, 5, 6, 7, 8};
  const StepCost::Microbatch b{3, 4, 5, 6, 7, 8, 9, 10};
  const StepCost::Microbatch mean = StepCost::Microbatch::Mean(a, b);
  const double got[] = {mean.forward_s,          mean.backward_s,  mean.weight_gradient_s,  mean.forward_exposed_s,
                        mean.backward_exposed_s, mean.parameter_s, mean.parameter_gather_s, mean.parameter_reduce_s};
  for (size_t i = 0; i < std::size(got); ++i) EXPECT_DOUBLE_EQ(got[i], static_cast<double>(i) + 2) << i;
}

TEST(StepTimeTest, DenseTrainingFlopsAreSixNTokensPlusAttention) {
  const kernels::ModelDesc m = kernels::TinyLlama();
  // Vanilla attention computes the whole score product, then masks it.
  const Priced p = Price(m, {1, 1, 1, 1, 1}, {.flash_attention = false});
  const int64_t tokens = m.batch * m.seq;
  const int64_t matmul_params =
      m.vocab * m.hidden + m.layers * (m.hidden * (m.heads + 2 * m.kv_heads) * m.head_dim +
                                       m.heads * m.head_dim * m.hidden + 3 * m.hidden * m.intermediate);
  // q.k and p.v: 2 x B x heads x S x S x head_dim FLOPs each, per layer (no causal skipping).
  const int64_t attention = m.layers * 2 * 2 * m.batch * m.heads * m.seq * m.seq * m.head_dim;
  EXPECT_EQ(p.cost.forward_flops, 2 * tokens * matmul_params + attention);
  EXPECT_EQ(p.cost.step_flops, 3 * p.cost.forward_flops);
  EXPECT_EQ(p.cost.communication_s, 0);
  EXPECT_DOUBLE_EQ(p.cost.step_time_s, p.cost.compute_s);
  EXPECT_EQ(p.cost.attention_causal_share, 1);
}

// A fused kernel computes the score blocks on or below the causal diagonal: half the product unsharded
// (FlashAttention-2's count), and its backward recomputes the scores: 2.5x the forward's FLOPs.
TEST(StepTimeTest, AFusedCausalKernelRunsHalfTheScoresAndRecomputesThemInTheBackward) {
  const kernels::ModelDesc m = kernels::TinyLlama();
  const Priced vanilla = Price(m, {1, 1, 1, 1, 1}, {.flash_attention = false});
  const Priced flash = Price(m, {1, 1, 1, 1, 1}, {.flash_attention = true});
  const int64_t attention = m.layers * 2 * 2 * m.batch * m.heads * m.seq * m.seq * m.head_dim;
  EXPECT_EQ(flash.cost.attention_causal_share, 0.5);
  EXPECT_EQ(flash.cost.forward_flops, vanilla.cost.forward_flops - attention / 2);
  EXPECT_EQ(flash.cost.step_flops, 3 * flash.cost.forward_flops + attention / 4);
}

// The shard holding the last queries attends to every earlier key: with the sequence over 4 devices it
// computes 1 - 1/8 of its full product, the busiest device's share.
TEST(StepTimeTest, SequenceShardsLeaveTheLastShardMostOfItsScores) {
  EXPECT_EQ(AttentionCausalShare(1), 0.5);
  EXPECT_EQ(AttentionCausalShare(4), 0.875);
  EXPECT_EQ(AttentionCausalShare(0), 0.5);  // no sequence axis
  kernels::ModelDesc m = kernels::TinyLlama();
  m.seq = 8;
  const Priced p = Price(m, {1, 1, 1, 1, 4}, {.flash_attention = true});
  EXPECT_EQ(p.cost.attention_causal_share, 0.875);
}

TEST(StepTimeTest, ADecodeStepAttendsToItsWholeCache) {
  const kernels::ModelDesc m = kernels::TinyLlama();
  const Priced p =
      Price(m, {1, 1, 1, 1, 1}, {.mode = Mode::kPrefill, .flash_attention = true, .decode_cache_tokens = 16});
  EXPECT_EQ(p.cost.attention_causal_share, 1);
}

TEST(StepTimeTest, FullRecomputationAddsOneForward) {
  const kernels::ModelDesc m = kernels::TinyLlama();
  const Priced none = Price(m, {1, 1, 1, 1, 1}, {.flash_attention = false});
  const Priced full =
      Price(m, {1, 1, 1, 1, 1}, {.remat = planner::CheckpointPolicy::kNothingSaveable, .flash_attention = false});
  const Priced forward = Price(m, {1, 1, 1, 1, 1}, {.mode = Mode::kPrefill, .flash_attention = false});
  EXPECT_EQ(full.cost.step_flops, 4 * none.cost.forward_flops);
  EXPECT_NEAR(full.cost.compute_s, none.cost.compute_s + forward.cost.compute_s, 1e-15);
}

TEST(StepTimeTest, ForwardCommunicationIsTheDryRunsKindByKind) {
  kernels::ModelDesc m = kernels::TinyLlama();
  m.batch = 4;
  const Priced p = Price(m, {1, 4, 1, 2, 1}, {});
  EXPECT_EQ(p.cost.forward.all_gather, p.run.Bytes(kernels::CollectiveKind::kAllGather));
  EXPECT_EQ(p.cost.forward.reduce_scatter, p.run.Bytes(kernels::CollectiveKind::kReduceScatter));
  EXPECT_EQ(p.cost.forward.all_reduce, p.run.Bytes(kernels::CollectiveKind::kAllReduce));
  EXPECT_EQ(p.cost.forward.all_to_all, p.run.Bytes(kernels::CollectiveKind::kAllToAll));
  EXPECT_GT(p.cost.forward.all_gather, 0);  // fsdp gathers the weights
  // Backward mirrors it: each gathered weight is gathered again and its gradient reduce-scattered.
  EXPECT_GE(p.cost.backward.reduce_scatter, p.cost.forward.all_gather);
}

TEST(StepTimeTest, GroupsLeavingTheFastDomainUseTheNetwork) {
  kernels::ModelDesc m = kernels::TinyLlama();
  m.batch = 8;
  // fsdp=8 spans 8 devices, more than the 4-chip fast domain: every fsdp collective is on the network.
  const Priced p = Price(m, {1, 8, 1, 1, 1}, {});
  ASSERT_FALSE(p.cost.collectives.empty());
  for (const PricedCollective& c : p.cost.collectives) EXPECT_EQ(c.link, "network") << c.op;
  // tp=2 (the minor axis) stays inside it.
  const Priced q = Price(m, {1, 4, 1, 2, 1}, {});
  bool tp_fast = false;
  for (const PricedCollective& c : q.cost.collectives) tp_fast = tp_fast || (c.axes == "tp" && c.link == "fast");
  EXPECT_TRUE(tp_fast);
}

// NCCL's split of a ring across fast domains (src/graph/tuning.cc, ncclTopoTuneModel): fsdp=8 over two
// 4-chip domains takes 1 step (2 for an all-reduce) at the network's latency, the rest at the fast
// domain's, and the bytes at the network's bandwidth.
TEST(StepTimeTest, ARingAcrossDomainsTakesItsInterDomainStepsAtTheNetworkLatency) {
  kernels::ModelDesc m = kernels::TinyLlama();
  m.batch = 8;
  const Priced p = Price(m, {1, 8, 1, 1, 1}, {});
  const step::HardwareProfile hw = TestChip();
  ASSERT_FALSE(p.cost.collectives.empty());
  for (const PricedCollective& c : p.cost.collectives) {
    const bool all_reduce = c.kind == kernels::CollectiveKind::kAllReduce;
    const double inter = all_reduce ? 2 : 1, steps = all_reduce ? 14 : 7;
    const double want = inter * hw.network.latency + (steps - inter) * hw.fast.latency +
                        static_cast<double>(c.bytes_per_device) / hw.network.bandwidth;
    EXPECT_NEAR(c.seconds, want, 1e-12) << c.op;
  }
}

TEST(StepTimeTest, ParameterGathersHideBehindComputeAndTensorParallelReductionsDoNot) {
  kernels::ModelDesc m = kernels::TinyLlama();
  m.batch = 4;
  const Priced p = Price(m, {1, 2, 1, 2, 1}, {});
  double exposed_activation = 0;
  for (const PricedCollective& c : p.cost.collectives) {
    if (!c.overlapped) exposed_activation += c.seconds * static_cast<double>(c.count);
  }
  EXPECT_GE(p.cost.exposed_communication_s, exposed_activation - 1e-15);
  EXPECT_LE(p.cost.exposed_communication_s, p.cost.communication_s + 1e-15);
  EXPECT_DOUBLE_EQ(p.cost.step_time_s, p.cost.compute_s + p.cost.exposed_communication_s);
}

// A TPU v5p-like chip: a 16x16x24 torus whose slices of whole 4x4x4 cubes wrap around, 1.8e11 B/s over one
// wrapped dim (the profile's convention), 1 us per ICI hop.
step::HardwareProfile V5pLike() {
  step::HardwareProfile hw = TestChip();
  hw.name = "v5p-like";
  hw.fast = {"ici", 16 * 16 * 24, {16, 16, 24}, 1.8e11, 1e-6};
  hw.fast.wraparound = "full_cubes";
  hw.network = {"dcn", 0, {}, 6.25e9, 14e-6};
  return hw;
}

Mesh EasyDelMesh(std::vector<int64_t> shape) { return {{"dp", "fsdp", "ep", "tp", "sp"}, std::move(shape), {}}; }

double AllGatherSeconds(const step::HardwareProfile& hw, const Mesh& mesh, int axis,
                        const std::vector<int64_t>& given = {}) {
  std::vector<int64_t> ici = mesh.shape;
  auto slice = step::LayOutSlice(hw, ici, given);
  EXPECT_TRUE(slice.ok()) << slice.status().ToString();
  const int64_t bytes = int64_t{1} << 30;
  return CollectiveSeconds(hw, mesh, {axis}, kernels::CollectiveKind::kAllGather, mesh.shape[static_cast<size_t>(axis)],
                           bytes, &*slice);
}

TEST(StepTimeTest, AV5pAllGatherOverTwoTorusDimsIsTwiceAsFastAsOverOne) {
  // 4x4x4 (full cube, every dim wraps): tp=4 takes one dim, fsdp=16 the other two (jax mesh_utils).
  const step::HardwareProfile hw = V5pLike();
  const Mesh mesh = EasyDelMesh({1, 16, 1, 4, 1});
  const double two_dims = AllGatherSeconds(hw, mesh, 1), one_dim = AllGatherSeconds(hw, mesh, 3);
  EXPECT_NEAR(one_dim / two_dims, 2.0, 0.01);
  // One dim with wraparound runs at the profile's bandwidth (x link efficiency); hops 4 / 2.
  EXPECT_NEAR(one_dim, 2e-6 + static_cast<double>(int64_t{1} << 30) / 1.8e11, 1e-9);
}

TEST(StepTimeTest, AnEightChipAxisWithoutWraparoundCostsTwiceOneWith) {
  const step::HardwareProfile hw = V5pLike();
  // tp=8 on the 8-long dim of a 4x4x8 slice (whole cubes: it wraps) and of a 2x2x8 one (it does not).
  const double wrapped = AllGatherSeconds(hw, EasyDelMesh({1, 16, 1, 8, 1}), 3);
  const double line = AllGatherSeconds(hw, EasyDelMesh({1, 4, 1, 8, 1}), 3, {2, 2, 8});
  EXPECT_NEAR(line / wrapped, 2.0, 0.01);
}

TEST(StepTimeTest, AGb200TensorParallelAllReduceOver72GpusStaysOnNvlink) {
  step::HardwareProfile nvl72 = TestChip();
  nvl72.fast = {"nvlink", 72, {}, 900e9, 3.4e-6};
  nvl72.network = {"infiniband", 0, {}, 50e9, 14e-6};
  const Mesh mesh = EasyDelMesh({1, 1, 1, 72, 1});
  const int64_t bytes = int64_t{1} << 30;
  const double seconds = CollectiveSeconds(nvl72, mesh, {3}, kernels::CollectiveKind::kAllReduce, 72, bytes);
  // One NVLink ring: 2 x 71 steps at NVLink's latency and the bytes at NVLink's bandwidth.
  EXPECT_NEAR(seconds, 2 * 71 * 3.4e-6 + static_cast<double>(bytes) / 900e9, 1e-9);
  // The same group on 8-GPU nodes crosses the network and runs at its 50e9.
  step::HardwareProfile hgx = nvl72;
  hgx.fast.chips = 8;
  EXPECT_GT(CollectiveSeconds(hgx, mesh, {3}, kernels::CollectiveKind::kAllReduce, 72, bytes), 10 * seconds);
}

TEST(StepTimeTest, TheNetworkRunsAtItsOwnEfficiency) {
  kernels::ModelDesc m = kernels::TinyLlama();
  m.batch = 8;
  const Priced p = Price(m, {1, 8, 1, 1, 1}, {});
  step::HardwareProfile hw = TestChip();
  hw.link_efficiency = 0.9;
  hw.network_efficiency = 0.5;
  const Mesh mesh = EasyDelMesh({1, 8, 1, 1, 1});
  const PricedCollective& c = p.cost.collectives.front();
  const double at_half = CollectiveSeconds(hw, mesh, {1}, c.kind, c.group, c.bytes_per_device);
  hw.network_efficiency = 1.0;
  const double at_full = CollectiveSeconds(hw, mesh, {1}, c.kind, c.group, c.bytes_per_device);
  EXPECT_NEAR(at_half - at_full, static_cast<double>(c.bytes_per_device) / hw.network.bandwidth, 1e-12);
}

}  // namespace
}  // namespace easyplan::step
