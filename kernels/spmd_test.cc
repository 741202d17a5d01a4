#include "kernels/spmd.h"

#include <gtest/gtest.h>

#include <cmath>

#include "planner/spec_test_util.h"

namespace easyplan::kernels {
namespace {

using planner::plan_testing::MakeMesh;

HostTensor Iota(Dims dims, double scale = 0.01) {
  HostTensor t(std::move(dims));
  for (int64_t i = 0; i < t.size(); ++i)
    t.data[static_cast<size_t>(i)] = std::sin(0.37 * static_cast<double>(i)) + scale * i;
  return t;
}

DistSpec Spec(std::vector<std::vector<int>> dims) { return DistSpec{std::move(dims), {}}; }

void ExpectNear(const HostTensor& a, const HostTensor& b) {
  ASSERT_EQ(a.shape, b.shape);
  for (size_t i = 0; i < a.data.size(); ++i) ASSERT_NEAR(a.data[i], b.data[i], 1e-9) << "index " << i;
}

class SpmdTest : public ::testing::Test {
 protected:
  // fsdp=2, tp=2
  SpmdTest() : geo_(MakeMesh({"fsdp", "tp"}, {2, 2})), comm_(geo_, 4, &log_, Injection::kNone), spmd_(comm_) {}

  int64_t Count(CollectiveKind kind) const {
    int64_t n = 0;
    for (const CommRecord& r : log_.records) n += r.kind == kind;
    return n;
  }

  MeshGeometry geo_;
  CommLog log_;
  Collectives comm_;
  Spmd spmd_;
};

TEST(HostTensorTest, DotMatchesNaiveLoopsAndTransposeRoundTrips) {
  const HostTensor a = Iota({3, 4}), b = Iota({4, 5});
  const HostTensor c = Dot(a, b, DotDims{{}, {}, {1}, {0}});
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 5; ++j) {
      double s = 0;
      for (int64_t k = 0; k < 4; ++k)
        s += a.data[static_cast<size_t>(i * 4 + k)] * b.data[static_cast<size_t>(k * 5 + j)];
      EXPECT_DOUBLE_EQ(c.data[static_cast<size_t>(i * 5 + j)], s);
    }
  }
  const HostTensor t = Iota({2, 3, 4});
  ExpectNear(Transpose(Transpose(t, {2, 0, 1}), {1, 2, 0}), t);
  const HostTensor box = SliceBox(t, {{1, 2}, {0, 3}, {2, 4}});
  EXPECT_EQ(box.shape, (Dims{1, 3, 2}));
  EXPECT_DOUBLE_EQ(box.data[0], t.data[12 + 2]);
}

TEST_F(SpmdTest, DistributeAndAssembleRoundTrip) {
  const HostTensor full = Iota({4, 6});
  const DistTensor t = spmd_.Place(full, Spec({{0}, {1}}));
  EXPECT_EQ(t.local[3].shape, (Dims{2, 3}));
  EXPECT_EQ(t.BoxOf(geo_, 3), (std::vector<Range>{{2, 4}, {3, 6}}));
  ExpectNear(Assemble(t, geo_), full);
}

TEST_F(SpmdTest, ContractingDimShardedOnBothOperandsGivesPartialProductAndAllReduce) {
  const HostTensor a = Iota({4, 8}), b = Iota({8, 6});
  DistTensor x = spmd_.Place(a, Spec({{}, {1}}));
  DistTensor w = spmd_.Place(b, Spec({{1}, {}}));
  DistTensor y = spmd_.Dot(x, w, DotDims{{}, {}, {1}, {0}}, "row-parallel");
  EXPECT_EQ(y.spec.partial, std::vector<int>{1});
  y = spmd_.Resolve(y, "test");
  ExpectNear(Assemble(y, geo_), Dot(a, b, DotDims{{}, {}, {1}, {0}}));
  EXPECT_EQ(Count(CollectiveKind::kAllReduce), 1);
  EXPECT_EQ(Count(CollectiveKind::kAllGather), 0);
  // 4x6 doubles at 4 bytes, group of 2: 2 * (2-1)/2 * 96 bytes.
  EXPECT_EQ(log_.Bytes(CollectiveKind::kAllReduce), 96);
}

TEST_F(SpmdTest, WeightShardedOnTheActivationsBatchAxisIsGathered) {
  // FSDP: activations [B(fsdp), H], weight [H(fsdp), I(tp)] -> gather the weight's H, no all-reduce.
  const HostTensor a = Iota({4, 8}), b = Iota({8, 6});
  DistTensor y =
      spmd_.Dot(spmd_.Place(a, Spec({{0}, {}})), spmd_.Place(b, Spec({{0}, {1}})), DotDims{{}, {}, {1}, {0}}, "fsdp");
  EXPECT_TRUE(y.spec.partial.empty());
  EXPECT_EQ(y.spec.dims, (std::vector<std::vector<int>>{{0}, {1}}));
  ExpectNear(Assemble(y, geo_), Dot(a, b, DotDims{{}, {}, {1}, {0}}));
  EXPECT_EQ(Count(CollectiveKind::kAllGather), 1);
  EXPECT_EQ(Count(CollectiveKind::kAllReduce), 0);
}

TEST_F(SpmdTest, ShardedOnOneOperandSlicesTheReplicatedOneLocally) {
  const HostTensor a = Iota({4, 8}), b = Iota({8, 6});
  DistTensor y =
      spmd_.Dot(spmd_.Place(a, Spec({{}, {0, 1}})), spmd_.Place(b, Spec({{}, {}})), DotDims{{}, {}, {1}, {0}}, "slice");
  EXPECT_EQ(y.spec.partial, (std::vector<int>{0, 1}));
  EXPECT_EQ(Count(CollectiveKind::kAllGather), 0);
  ExpectNear(Assemble(spmd_.Resolve(y, "t"), geo_), Dot(a, b, DotDims{{}, {}, {1}, {0}}));
}

TEST_F(SpmdTest, ColumnParallelGathersTheActivationNotTheWeight) {
  // Megatron's column-parallel linear under XLA: activations [T, H(tp)] (EasyDeL's hidden states on tp),
  // weight [H, O(tp)]. The result follows the weight's O(tp) (sharding propagation), so the activation's
  // H is gathered (dot_handler.cc: "RHS and output have the same partitioned non-contracting dims"),
  // never the weight; no partial sum is left.
  const HostTensor a = Iota({4, 8}), b = Iota({8, 6});
  DistTensor w = spmd_.Place(b, Spec({{}, {1}}));
  w.parameter = true;
  DistTensor y = spmd_.Dot(spmd_.Place(a, Spec({{0}, {1}})), w, DotDims{{}, {}, {1}, {0}}, "column-parallel");
  EXPECT_TRUE(y.spec.partial.empty());
  EXPECT_EQ(y.spec.dims, (std::vector<std::vector<int>>{{0}, {1}}));
  ASSERT_EQ(log_.records.size(), 1u);
  EXPECT_EQ(log_.records[0].kind, CollectiveKind::kAllGather);
  EXPECT_FALSE(log_.records[0].parameter);
  ExpectNear(Assemble(y, geo_), Dot(a, b, DotDims{{}, {}, {1}, {0}}));
}

TEST_F(SpmdTest, OneValueGatheredForSeveralDotsIsGatheredOnce) {
  // q, k and v (or gate and up) read one normed hidden state: XLA's CSE leaves one all-gather.
  const HostTensor a = Iota({4, 8});
  const DistTensor x = spmd_.Place(a, Spec({{0}, {1}}));
  for (int i = 0; i < 3; ++i) {
    const HostTensor b = Iota({8, 6}, 0.02 * (i + 1));
    DistTensor y = spmd_.Dot(x, spmd_.Place(b, Spec({{}, {1}})), DotDims{{}, {}, {1}, {0}}, "projection");
    ExpectNear(Assemble(y, geo_), Dot(a, b, DotDims{{}, {}, {1}, {0}}));
  }
  EXPECT_EQ(Count(CollectiveKind::kAllGather), 1);
}

TEST_F(SpmdTest, TheUserShardingDecidesWhichOperandTheResultFollows) {
  // Row-parallel output [T, O] from lhs [T(fsdp), I(tp)] and rhs [I(tp), O(fsdp)]: both propose fsdp for
  // different dims. With the user asking for [T(fsdp), O(tp)] the lhs's batch sharding wins and the
  // weight's O is gathered (FSDP), leaving a partial sum over tp for a reduce-scatter into O(tp).
  const HostTensor a = Iota({4, 8}), b = Iota({8, 6});
  const DistSpec user = Spec({{0}, {1}});
  DistTensor y = spmd_.Dot(spmd_.Place(a, Spec({{0}, {1}})), spmd_.Place(b, Spec({{1}, {0}})),
                           DotDims{{}, {}, {1}, {0}}, "row-parallel", {.user = &user});
  EXPECT_EQ(y.spec.dims, (std::vector<std::vector<int>>{{0}, {}}));
  EXPECT_EQ(y.spec.partial, std::vector<int>{1});
  y = spmd_.Reshard(std::move(y), user, "hidden constraint");
  EXPECT_EQ(Count(CollectiveKind::kReduceScatter), 1);
  EXPECT_EQ(Count(CollectiveKind::kAllReduce), 0);
  ExpectNear(Assemble(y, geo_), Dot(a, b, DotDims{{}, {}, {1}, {0}}));
}

TEST_F(SpmdTest, MemoryBoundOpsAreLoggedAndAChainFuses) {
  // x -> x*x -> sum: the square never reaches HBM (XLA's loop fusion), so the log reads x once and
  // writes only the sum; an op on a value that was not the previous result reads it again.
  MatmulLog log;
  spmd_.set_matmul_log(&log);
  const DistTensor x = spmd_.Place(Iota({4, 8}), Spec({{}, {}}));
  DistTensor square = spmd_.Map(x, [](double v) { return v * v; });
  DistTensor sum = spmd_.Reduce(std::move(square), 1, ReduceOp::kSum, "sum");
  DistTensor again = spmd_.Map(x, [](double v) { return v + 1; });
  ASSERT_EQ(log.memory_ops.size(), 3u);
  EXPECT_EQ(log.memory_ops[0].read, 32 * 4);  // x, 4-byte elements
  EXPECT_EQ(log.memory_ops[0].written, 0);    // fused into the sum
  EXPECT_EQ(log.memory_ops[1].read, 0);
  EXPECT_EQ(log.memory_ops[1].written, 4 * 4);
  EXPECT_EQ(log.memory_ops[2].read, 32 * 4);  // x again
  EXPECT_EQ(log.memory_ops[2].written, 32 * 4);
  spmd_.set_matmul_log(nullptr);
}

TEST_F(SpmdTest, KeptPartialSumsPassThroughALinearDot) {
  // A sum pending over tp stays pending through a selection (the fused MoE's row permutation).
  const HostTensor a = Iota({4, 8}), sel = Iota({3, 4});
  DistTensor x = spmd_.Dot(spmd_.Place(a, Spec({{}, {1}})), spmd_.Place(Iota({8, 6}), Spec({{1}, {}})),
                           DotDims{{}, {}, {1}, {0}}, "partial");
  ASSERT_EQ(x.spec.partial, std::vector<int>{1});
  DistTensor y = spmd_.Dot(spmd_.Place(sel, Spec({{}, {}})), x, DotDims{{}, {}, {1}, {0}}, "select",
                           {.keep_partial = true, .matmul = false});
  EXPECT_EQ(y.spec.partial, std::vector<int>{1});
  EXPECT_EQ(Count(CollectiveKind::kAllReduce), 0);
  y = spmd_.Resolve(y, "t");
  const HostTensor full = Dot(sel, Dot(a, Iota({8, 6}), DotDims{{}, {}, {1}, {0}}), DotDims{{}, {}, {1}, {0}});
  ExpectNear(Assemble(y, geo_), full);
}

TEST_F(SpmdTest, BatchedDotWithDifferentBatchShardingReshardsTheRhs) {
  const HostTensor a = Iota({2, 4, 3}), b = Iota({2, 3, 6});
  const DotDims dims{{0}, {0}, {2}, {1}};
  DistTensor y = spmd_.Dot(spmd_.Place(a, Spec({{0}, {1}, {}})), spmd_.Place(b, Spec({{}, {}, {1}})), dims, "bmm");
  ExpectNear(Assemble(spmd_.Resolve(y, "t"), geo_), Dot(a, b, dims));
}

TEST_F(SpmdTest, ReshardUsesReduceScatterAllToAllGatherAndLocalSlices) {
  const HostTensor a = Iota({4, 8}), b = Iota({8, 4});
  DistTensor y =
      spmd_.Dot(spmd_.Place(a, Spec({{}, {1}})), spmd_.Place(b, Spec({{1}, {}})), DotDims{{}, {}, {1}, {0}}, "rs");
  y = spmd_.Reshard(y, Spec({{1}, {}}), "scatter rows");
  EXPECT_EQ(Count(CollectiveKind::kReduceScatter), 1);
  const HostTensor want = Dot(a, b, DotDims{{}, {}, {1}, {0}});
  ExpectNear(Assemble(y, geo_), want);
  y = spmd_.Reshard(y, Spec({{}, {1}}), "move");
  EXPECT_EQ(Count(CollectiveKind::kAllToAll), 1);
  ExpectNear(Assemble(y, geo_), want);
  y = spmd_.Reshard(y, Spec({{0}, {1}}), "slice");
  EXPECT_EQ(Count(CollectiveKind::kAllGather), 0);
  y = spmd_.Reshard(y, Spec({{1}, {0}}), "swap");
  ExpectNear(Assemble(y, geo_), want);
}

TEST_F(SpmdTest, ReductionsSoftmaxEmbeddingAndReshapesAgreeWithTheFullComputation) {
  const HostTensor a = Iota({4, 8});
  DistTensor s = spmd_.Softmax(spmd_.Place(a, Spec({{0}, {1}})), 1, "softmax");
  const HostTensor got = Assemble(s, geo_);
  for (int64_t i = 0; i < 4; ++i) {
    double m = -1e300, z = 0;
    for (int64_t j = 0; j < 8; ++j) m = std::max(m, a.data[static_cast<size_t>(i * 8 + j)]);
    for (int64_t j = 0; j < 8; ++j) z += std::exp(a.data[static_cast<size_t>(i * 8 + j)] - m);
    for (int64_t j = 0; j < 8; ++j) {
      EXPECT_NEAR(got.data[static_cast<size_t>(i * 8 + j)], std::exp(a.data[static_cast<size_t>(i * 8 + j)] - m) / z,
                  1e-12);
    }
  }
  const HostTensor table = Iota({8, 4});
  HostTensor ids({2, 2});
  ids.data = {7, 0, 3, 4};
  DistTensor e = spmd_.Embed(spmd_.Place(table, Spec({{1}, {}})), spmd_.Place(ids, Spec({{0}, {}})), "embed");
  EXPECT_EQ(e.spec.partial, std::vector<int>{1});
  const HostTensor emb = Assemble(spmd_.Resolve(e, "t"), geo_);
  for (int i = 0; i < 4; ++i) {
    for (int c = 0; c < 4; ++c) {
      EXPECT_DOUBLE_EQ(emb.data[static_cast<size_t>(i * 4 + c)],
                       table.data[static_cast<size_t>(static_cast<int>(ids.data[static_cast<size_t>(i)]) * 4 + c)]);
    }
  }
  DistTensor r = spmd_.Split(spmd_.Place(a, Spec({{}, {0, 1}})), 1, 4, "split");
  EXPECT_EQ(r.spec.dims[1], (std::vector<int>{0, 1}));
  r = spmd_.Merge(r, 1, "merge");
  ExpectNear(Assemble(r, geo_), a);
  DistTensor odd = spmd_.Split(spmd_.Place(a, Spec({{}, {0, 1}})), 1, 2, "split");  // 2 % 4 != 0: gathered
  EXPECT_TRUE(odd.spec.dims[1].empty());
}

// jnp.take(stacked_kernels, indices, axis=0) (gpt-oss's experts at EasyDeL c14e25c9): a [E, in, out] table's
// rows taken per index, its trailing dims passed through with their sharding.
TEST_F(SpmdTest, EmbedTakesRowsOfAStackedTableKeepingItsTrailingDimsSharding) {
  const HostTensor table = Iota({4, 3, 2});
  HostTensor ids({2, 2});
  ids.data = {3, 0, 1, 3};
  DistTensor t = spmd_.Embed(spmd_.Place(table, Spec({{}, {}, {1}})), spmd_.Place(ids, Spec({{0}, {}})), "take");
  EXPECT_EQ(t.shape, (Dims{2, 2, 3, 2}));
  EXPECT_EQ(t.spec.dims[3], std::vector<int>{1});
  EXPECT_TRUE(t.spec.partial.empty());
  const HostTensor got = Assemble(t, geo_);
  for (int i = 0; i < 4; ++i) {
    const auto row = static_cast<int>(ids.data[static_cast<size_t>(i)]);
    for (int c = 0; c < 6; ++c) {
      EXPECT_DOUBLE_EQ(got.data[static_cast<size_t>(i * 6 + c)], table.data[static_cast<size_t>(row * 6 + c)]);
    }
  }
  EXPECT_EQ(Count(CollectiveKind::kAllGather), 0);
}

TEST_F(SpmdTest, BroadcastAndConcatBuildAnMlaKeyFromPerHeadAndSharedParts) {
  // k_nope [B=2, T=4, H=4, 3] sharded (fsdp, -, tp, -); k_pe [2, 4, 1, 2] sharded on T only.
  const HostTensor nope = Iota({2, 4, 4, 3});
  const HostTensor pe = Iota({2, 4, 1, 2}, 0.5);
  DistTensor shared = spmd_.Broadcast(spmd_.Place(pe, Spec({{}, {0}, {}, {}})), 2, 4);
  EXPECT_EQ(shared.shape, (Dims{2, 4, 4, 2}));
  DistTensor key = spmd_.Concat(spmd_.Place(nope, Spec({{0}, {}, {1}, {}})), std::move(shared), 3, "key");
  EXPECT_EQ(key.shape, (Dims{2, 4, 4, 5}));
  EXPECT_EQ(key.spec.dims, (std::vector<std::vector<int>>{{0}, {}, {1}, {}}));  // the first part's layout
  const HostTensor got = Assemble(key, geo_);
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t t = 0; t < 4; ++t) {
      for (int64_t h = 0; h < 4; ++h) {
        for (int64_t c = 0; c < 5; ++c) {
          const double want = c < 3 ? nope.data[static_cast<size_t>(((b * 4 + t) * 4 + h) * 3 + c)]
                                    : pe.data[static_cast<size_t>((b * 4 + t) * 2 + (c - 3))];
          ASSERT_DOUBLE_EQ(got.data[static_cast<size_t>(((b * 4 + t) * 4 + h) * 5 + c)], want)
              << b << " " << t << " " << h << " " << c;
        }
      }
    }
  }
  EXPECT_GT(Count(CollectiveKind::kAllToAll) + Count(CollectiveKind::kAllGather), 0);  // pe moved off T
}

TEST_F(SpmdTest, DropAllReduceInjectionLeavesPartialSums) {
  CommLog log;
  Collectives comm(geo_, 4, &log, Injection::kDropAllReduce);
  Spmd spmd(comm);
  const HostTensor a = Iota({4, 8}), b = Iota({8, 6});
  DistTensor y =
      spmd.Dot(spmd.Place(a, Spec({{}, {1}})), spmd.Place(b, Spec({{1}, {}})), DotDims{{}, {}, {1}, {0}}, "x");
  const HostTensor got = Assemble(spmd.Resolve(y, "t"), geo_);
  const HostTensor want = Dot(a, b, DotDims{{}, {}, {1}, {0}});
  EXPECT_EQ(log.dropped_all_reduces, 1);
  EXPECT_GT(std::abs(got.data[0] - want.data[0]), 1e-6);
}

}  // namespace
}  // namespace easyplan::kernels

namespace easyplan::kernels {
namespace {

// Live-activation metering (kernels/live_meter.h): what the numeric check reports as the forward's
// peak. Blocks are [8, 4] cut over fsdp=2 x tp=2: 8 elements per device, 2 bytes each.
class LiveMeterTest : public SpmdTest {
 protected:
  LiveMeterTest() : meter_(4, 2) { spmd_.set_meter(&meter_); }
  ~LiveMeterTest() override { spmd_.set_meter(nullptr); }

  DistTensor Input() const { return spmd_.Place(Iota({8, 4}), Spec({{0}, {1}})); }

  LiveMeter meter_;
};

TEST_F(LiveMeterTest, ChargesAnOpResultUntilItsLastCopyGoesAway) {
  {
    DistTensor a = spmd_.Map(Input(), [](double v) { return v * 2; });
    EXPECT_EQ(meter_.live(), (std::vector<int64_t>{16, 16, 16, 16}));
    DistTensor copy = a;  // the residual stream kept beside the running value: one buffer, one charge
    EXPECT_EQ(meter_.live()[0], 16);
    a = DistTensor();
    EXPECT_EQ(meter_.live()[0], 16);
  }
  EXPECT_EQ(meter_.live(), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(meter_.peak(), (std::vector<int64_t>{16, 16, 16, 16}));
}

TEST_F(LiveMeterTest, AnOpThatReusesItsLastHoldersBlocksDoesNotCountThemTwice) {
  DistTensor a = spmd_.Map(Input(), [](double v) { return v + 1; });
  a = spmd_.Map(std::move(a), [](double v) { return v * 3; });  // in place: 16 bytes live, never 32
  EXPECT_EQ(meter_.peak()[0], 16);
  DistTensor b = spmd_.Map(a, [](double v) { return -v; });  // a copy: a and b both live
  EXPECT_EQ(meter_.live()[0], 32);
  EXPECT_EQ(meter_.peak()[0], 32);
}

TEST_F(LiveMeterTest, OnlyTheOutermostOpsResultIsCharged) {
  // Softmax reduces and maps inside; only its [8, 4] result (and the operand the test holds) counts.
  DistTensor x = spmd_.Map(Input(), [](double v) { return v; });
  DistTensor p = spmd_.Softmax(x, 1, "softmax");
  EXPECT_EQ(meter_.live()[0], 32);
  EXPECT_EQ(meter_.peak()[0], 32);
}

TEST_F(LiveMeterTest, UntrackedTensorsAndMarksAreNotCharged) {
  DistTensor a = spmd_.Map(Input(), [](double v) { return v; });
  meter_.Mark();
  DistTensor cache = spmd_.Map(a, [](double v) { return v; });
  spmd_.Untrack(cache);  // the KV cache: its own figure
  EXPECT_EQ(meter_.live()[0], 16);
  EXPECT_EQ(meter_.marked()[0], 16);
  EXPECT_EQ(meter_.peak()[0], 32);  // it was live for an instant before Untrack
}

}  // namespace
}  // namespace easyplan::kernels
