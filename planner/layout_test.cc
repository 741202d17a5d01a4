#include "planner/layout.h"

#include <gtest/gtest.h>

#include <map>

#include "planner/layout_test_util.h"

namespace easyplan::planner {
namespace {

using Ranges = std::vector<Range>;
using Sizes = std::vector<int64_t>;
using Kind = SpecIssue::Kind;

// The meshes of the JAX tests (jax tests/array_test.py) and of eformer's worked cases.
Mesh MeshXY() { return MakeMesh({{"x", 4}, {"y", 2}}); }
Mesh MeshA() { return MakeMesh({{"dp", 1}, {"fsdp", 4}, {"ep", 1}, {"tp", 2}, {"sp", 1}}); }
Mesh MeshB() { return MakeMesh({{"dp", 1}, {"fsdp", 4}, {"ep", 2}, {"tp", 2}, {"sp", 2}}); }

std::vector<Kind> Kinds(const CorrectedSpec& corrected) {
  std::vector<Kind> kinds;
  for (const SpecIssue& issue : corrected.issues) kinds.push_back(issue.kind);
  return kinds;
}

Sizes ReplicaIds(const TensorLayout& layout, int64_t devices) {
  Sizes ids;
  for (int64_t d = 0; d < devices; ++d) ids.push_back(layout.ReplicaId(d));
  return ids;
}

// ---- CorrectSpec: eformer's get_corrected_named_sharding (eformer/escale/partition/constraints.py) ----

PartitionSpec Corrected(const Shape& shape, const PartitionSpec& spec, const Mesh& mesh) {
  return CorrectSpec(shape, spec, mesh, UnevenMode::kReplicate).spec;
}

TEST(UnevenModeTest, EveryModesNameParsesBackToIt) {
  for (UnevenMode mode : kUnevenModes) EXPECT_EQ(ParseUnevenMode(UnevenModeName(mode)), mode);
  EXPECT_EQ(ParseUnevenMode("pad"), std::nullopt);
}

TEST(CorrectSpecTest, DivisibleSpecIsUnchanged) {
  CorrectedSpec out = CorrectSpec({4096, 11008}, P({{"fsdp", "sp"}, {"tp"}}), MeshA(), UnevenMode::kReplicate);
  EXPECT_EQ(out.spec, P({{"fsdp", "sp"}, {"tp"}}));
  EXPECT_TRUE(out.issues.empty());
  EXPECT_FALSE(out.HasError());
}

TEST(CorrectSpecTest, IndivisibleVocabLosesItsWholeTupleEntry) {
  CorrectedSpec out = CorrectSpec({32001, 4096}, P({{"fsdp", "sp"}, {"tp"}}), MeshA(), UnevenMode::kReplicate);
  EXPECT_EQ(out.spec, P({kNone, {"tp"}}));
  ASSERT_EQ(Kinds(out), (std::vector<Kind>{Kind::kUnevenReplaced}));
  EXPECT_EQ(out.issues[0].dim, 0);
  EXPECT_EQ(out.issues[0].dim_size, 32001);
  EXPECT_EQ(out.issues[0].partitions, 4);
  EXPECT_EQ(out.issues[0].message,
            "dim 0 of size 32001 is not divisible by ('fsdp', 'sp') = 4 (fsdp=4 x sp=1); the entry becomes None and "
            "the dim is replicated");
  EXPECT_FALSE(out.HasError());
}

TEST(CorrectSpecTest, AllNoneCollapsesToEmptySpec) {
  CorrectedSpec out = CorrectSpec({4096}, P({kNone}), MeshA(), UnevenMode::kReplicate);
  EXPECT_EQ(out.spec, P());
  EXPECT_TRUE(out.issues.empty());
}

TEST(CorrectSpecTest, SpecLongerThanRankIsTruncated) {
  CorrectedSpec out = CorrectSpec({4096}, P({{"fsdp", "sp"}, {"tp"}}), MeshA(), UnevenMode::kReplicate);
  EXPECT_EQ(out.spec, P({{"fsdp", "sp"}}));
  ASSERT_EQ(Kinds(out), (std::vector<Kind>{Kind::kTruncated}));
  EXPECT_EQ(out.issues[0].dim, -1);
  EXPECT_EQ(out.issues[0].message,
            "P(('fsdp', 'sp'), 'tp') has 2 entries for a rank-1 tensor of shape [4096]; truncated to P(('fsdp', "
            "'sp'))");
  EXPECT_EQ(SpecIssueSeverity(Kind::kTruncated), Severity::kWarning);
}

TEST(CorrectSpecTest, TupleProductCountsEveryAxis) {
  // Mesh B: fsdp*sp = 8 does not divide 12 although fsdp = 4 does: the whole entry goes.
  EXPECT_EQ(Corrected({12, 8}, P({{"fsdp", "sp"}, {"tp"}}), MeshB()), P({kNone, {"tp"}}));
  EXPECT_EQ(Corrected({8, 64, 128}, P({{"ep", "sp", "fsdp"}, kNone, {"tp"}}), MeshB()), P({kNone, kNone, {"tp"}}));
}

TEST(CorrectSpecTest, UnknownAxisEntryBecomesNone) {
  CorrectedSpec out = CorrectSpec({16, 4}, P({{"xx"}, {"tp"}}), MeshA(), UnevenMode::kReplicate);
  EXPECT_EQ(out.spec, P({kNone, {"tp"}}));
  ASSERT_EQ(Kinds(out), (std::vector<Kind>{Kind::kUnknownAxis}));
  EXPECT_EQ(out.issues[0].dim, 0);
  EXPECT_EQ(out.issues[0].axis, "xx");
  EXPECT_EQ(out.issues[0].message,
            "Resource axis: xx of P('xx', 'tp') is not found in mesh: ('dp', 'fsdp', 'ep', 'tp', 'sp').");
  EXPECT_TRUE(out.HasError());
}

TEST(CorrectSpecTest, ShortSpecIsPaddedWithNone) {
  EXPECT_EQ(Corrected({16, 4, 2}, P({{"fsdp"}}), MeshA()), P({{"fsdp"}, kNone, kNone}));
}

TEST(CorrectSpecTest, SizeOneAxesAreKept) {
  CorrectedSpec out = CorrectSpec({3, 3}, P({{"dp"}, {"sp"}}), MeshA(), UnevenMode::kReplicate);
  EXPECT_EQ(out.spec, P({{"dp"}, {"sp"}}));
  EXPECT_TRUE(out.issues.empty());
}

// ---- CorrectSpec: rank 0, modes, messages ----

TEST(CorrectSpecTest, ScalarsGetEmptySpecInEveryMode) {
  for (UnevenMode mode : {UnevenMode::kReplicate, UnevenMode::kError, UnevenMode::kChunk}) {
    CorrectedSpec out = CorrectSpec(Shape{}, P({{"fsdp"}, {"tp"}}), MeshA(), mode);
    EXPECT_EQ(out.spec, P()) << UnevenModeName(mode);
    EXPECT_TRUE(out.issues.empty()) << UnevenModeName(mode);
  }
}

TEST(CorrectSpecTest, ErrorAndChunkModesKeepTheWrittenLength) {
  for (UnevenMode mode : {UnevenMode::kError, UnevenMode::kChunk}) {
    EXPECT_EQ(CorrectSpec({16, 4, 2}, P({{"fsdp"}}), MeshA(), mode).spec, P({{"fsdp"}}));
    EXPECT_EQ(CorrectSpec({4096}, P({kNone}), MeshA(), mode).spec, P({kNone}));
    EXPECT_EQ(CorrectSpec({16, 4}, P({{"xx"}, {"tp"}}), MeshA(), mode).spec, P({kNone, {"tp"}}));
    EXPECT_EQ(CorrectSpec({4096}, P({{"fsdp"}, {"tp"}}), MeshA(), mode).spec, P({{"fsdp"}}));
  }
}

TEST(CorrectSpecTest, ErrorModeUsesJaxIndivisibleMessage) {  // jax tests/array_test.py test_uneven_shard_error
  CorrectedSpec out = CorrectSpec({8, 3}, P({{"x"}, {"y"}}), MeshXY(), UnevenMode::kError);
  EXPECT_EQ(out.spec, P({{"x"}, {"y"}}));
  ASSERT_EQ(Kinds(out), (std::vector<Kind>{Kind::kIndivisible}));
  EXPECT_EQ(out.issues[0].dim, 1);
  EXPECT_EQ(out.issues[0].dim_size, 3);
  EXPECT_EQ(out.issues[0].partitions, 2);
  EXPECT_EQ(out.issues[0].message,
            "NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto)), spec=P('x', 'y')) implies that array "
            "axis 1 is partitioned 2 times, but the dimension size is 3 (full shape: (8, 3), per-dimension tiling "
            "factors: (4, 2) should evenly divide the shape)");
  EXPECT_TRUE(out.HasError());
}

TEST(CorrectSpecTest, IndivisibleMessageUsesOneElementTuples) {  // jax pjit_test: mesh (2,), P('x'), shape (1,)
  CorrectedSpec out = CorrectSpec({1}, P({{"x"}}), MakeMesh({{"x", 2}}), UnevenMode::kError);
  ASSERT_EQ(Kinds(out), (std::vector<Kind>{Kind::kIndivisible}));
  EXPECT_EQ(out.issues[0].message,
            "NamedSharding(mesh=Mesh('x': 2, axis_types=(Auto,)), spec=P('x')) implies that array axis 0 is "
            "partitioned 2 times, but the dimension size is 1 (full shape: (1,), per-dimension tiling factors: (2,) "
            "should evenly divide the shape)");
}

TEST(CorrectSpecTest, IndivisibleFactorsCoverUnwrittenDims) {
  // Mesh (2,2), P('x','y') on (1,2) (COPIED error case), and a short spec whose tail dims count as 1.
  CorrectedSpec square = CorrectSpec({1, 2}, P({{"x"}, {"y"}}), MakeMesh({{"x", 2}, {"y", 2}}), UnevenMode::kError);
  ASSERT_EQ(Kinds(square), (std::vector<Kind>{Kind::kIndivisible}));
  EXPECT_EQ(square.issues[0].dim, 0);

  CorrectedSpec pjit = CorrectSpec({3, 2}, P({{"x"}, kNone}), MakeMesh({{"x", 2}}), UnevenMode::kError);
  ASSERT_EQ(Kinds(pjit), (std::vector<Kind>{Kind::kIndivisible}));

  CorrectedSpec tuple = CorrectSpec({12, 8, 5}, P({{"fsdp", "sp"}}), MeshB(), UnevenMode::kError);
  ASSERT_EQ(Kinds(tuple), (std::vector<Kind>{Kind::kIndivisible}));
  EXPECT_EQ(tuple.issues[0].message,
            "NamedSharding(mesh=Mesh('dp': 1, 'fsdp': 4, 'ep': 2, 'tp': 2, 'sp': 2, axis_types=(Auto, Auto, Auto, "
            "Auto, Auto)), spec=P(('fsdp', 'sp'))) implies that array axis 0 is partitioned 8 times, but the "
            "dimension size is 12 (full shape: (12, 8, 5), per-dimension tiling factors: (8, 1, 1) should evenly "
            "divide the shape)");
}

TEST(CorrectSpecTest, ChunkModeKeepsTheEntryWithANote) {
  CorrectedSpec out = CorrectSpec({18, 2}, P({{"x", "y"}}), MeshXY(), UnevenMode::kChunk);
  EXPECT_EQ(out.spec, P({{"x", "y"}}));
  ASSERT_EQ(Kinds(out), (std::vector<Kind>{Kind::kUnevenChunked}));
  EXPECT_EQ(out.issues[0].partitions, 8);
  EXPECT_EQ(out.issues[0].message,
            "dim 0 of size 18 is not divisible by ('x', 'y') = 8 (x=4 x y=2); chunked as torch.chunk, so trailing "
            "shards are smaller or empty");
  EXPECT_FALSE(out.HasError());
  EXPECT_EQ(SpecIssueSeverity(Kind::kUnevenChunked), Severity::kNote);
}

TEST(CorrectSpecTest, DuplicateAxisUsesJaxDuplicateSpecMessage) {  // jax/_src/named_sharding.py
  CorrectedSpec out = CorrectSpec({8, 8}, P({{"x"}, {"x"}}), MeshXY(), UnevenMode::kReplicate);
  EXPECT_EQ(out.spec, P({{"x"}, {"x"}}));
  ASSERT_EQ(Kinds(out), (std::vector<Kind>{Kind::kDuplicateAxis}));
  EXPECT_EQ(out.issues[0].axis, "x");
  EXPECT_EQ(out.issues[0].dim, 1);
  EXPECT_EQ(out.issues[0].message,
            "A single NamedSharding spec specification can map every mesh axis to at most one positional dimension, "
            "but P('x', 'x') has duplicate entries for `x`");
  EXPECT_TRUE(out.HasError());
}

TEST(CorrectSpecTest, DuplicateMessageListsEveryRepeatedAxisSorted) {
  CorrectedSpec out = CorrectSpec({8, 8, 8}, P({{"y", "x"}, {"x"}, {"y"}}), MeshXY(), UnevenMode::kError);
  ASSERT_EQ(Kinds(out), (std::vector<Kind>{Kind::kDuplicateAxis, Kind::kDuplicateAxis}));
  EXPECT_EQ(out.issues[0].axis, "x");
  EXPECT_EQ(out.issues[1].axis, "y");
  EXPECT_EQ(out.issues[1].dim, 2);
  EXPECT_EQ(out.issues[0].message,
            "A single NamedSharding spec specification can map every mesh axis to at most one positional dimension, "
            "but P(('y', 'x'), 'x', 'y') has duplicate entries for `x`, `y`");
}

TEST(CorrectSpecTest, ChecksSeeTheTruncatedSpec) {
  // The extra entry (which names an unknown axis) is gone before the checks run, as in eformer.
  CorrectedSpec out = CorrectSpec({8}, P({{"x"}, {"zz"}}), MeshXY(), UnevenMode::kError);
  EXPECT_EQ(Kinds(out), (std::vector<Kind>{Kind::kTruncated}));
  EXPECT_EQ(out.spec, P({{"x"}}));
}

TEST(CorrectSpecTest, EveryUnknownAxisIsReported) {
  CorrectedSpec out = CorrectSpec({8, 8}, P({{"x", "zz"}, {"qq"}}), MeshXY(), UnevenMode::kReplicate);
  ASSERT_EQ(Kinds(out), (std::vector<Kind>{Kind::kUnknownAxis, Kind::kUnknownAxis}));
  EXPECT_EQ(out.issues[0].message, "Resource axis: zz of P(('x', 'zz'), 'qq') is not found in mesh: ('x', 'y').");
  EXPECT_EQ(out.issues[1].dim, 1);
  EXPECT_EQ(out.spec, P());  // both entries dropped, then the all-None collapse
}

TEST(CorrectSpecTest, UnknownAxisMessageUsesOneElementMeshTuple) {
  CorrectedSpec out = CorrectSpec({8}, P({{"y"}}), MakeMesh({{"x", 2}}), UnevenMode::kError);
  ASSERT_EQ(out.issues.size(), 1u);
  EXPECT_EQ(out.issues[0].message, "Resource axis: y of P('y') is not found in mesh: ('x',).");
}

TEST(CorrectSpecTest, ZeroSizedDimIsDivisible) {
  EXPECT_TRUE(CorrectSpec({0, 4}, P({{"x"}, {"y"}}), MeshXY(), UnevenMode::kError).issues.empty());
}

TEST(UnevenModeTest, Names) {
  EXPECT_EQ(UnevenModeName(UnevenMode::kReplicate), "replicate");
  EXPECT_EQ(UnevenModeName(UnevenMode::kError), "error");
  EXPECT_EQ(UnevenModeName(UnevenMode::kChunk), "chunk");
}

// ---- TensorLayout: JAX index maps (copied from jax tests/array_test.py test_array_2d_shard) ----

struct ArrayCase {
  PartitionSpec spec;
  Ranges dev0;
  Ranges dev1;
  Sizes shard;
  Sizes replica_ids;
};

TEST(TensorLayoutTest, Array2dShardIndicesShardShapesAndReplicaIds) {
  const std::vector<ArrayCase> cases = {
      {P({{"x"}, {"y"}}), {{0, 2}, {0, 1}}, {{0, 2}, {1, 2}}, {2, 1}, {0, 0, 0, 0, 0, 0, 0, 0}},
      {P({{"x"}}), {{0, 2}, {0, 2}}, {{0, 2}, {0, 2}}, {2, 2}, {0, 1, 0, 1, 0, 1, 0, 1}},
      {P({{"y"}}), {{0, 4}, {0, 2}}, {{4, 8}, {0, 2}}, {4, 2}, {0, 0, 1, 1, 2, 2, 3, 3}},
      {P({kNone, {"y"}}), {{0, 8}, {0, 1}}, {{0, 8}, {1, 2}}, {8, 1}, {0, 0, 1, 1, 2, 2, 3, 3}},
      {P({{"x", "y"}}), {{0, 1}, {0, 2}}, {{1, 2}, {0, 2}}, {1, 2}, {0, 0, 0, 0, 0, 0, 0, 0}},
      {P(), {{0, 8}, {0, 2}}, {{0, 8}, {0, 2}}, {8, 2}, {0, 1, 2, 3, 4, 5, 6, 7}},
  };
  for (const ArrayCase& c : cases) {
    TensorLayout layout = MakeLayout({8, 2}, c.spec, MeshXY());
    EXPECT_EQ(layout.SliceOf(0), c.dev0) << c.spec.ToString();
    EXPECT_EQ(layout.SliceOf(1), c.dev1) << c.spec.ToString();
    EXPECT_EQ(layout.shard_shape(), Shape(c.shard)) << c.spec.ToString();
    EXPECT_EQ(ReplicaIds(layout, 8), c.replica_ids) << c.spec.ToString();
    EXPECT_TRUE(layout.even());
  }
}

TEST(TensorLayoutTest, TupleEntryIsMajorToMinor) {
  // P(('x','y')): device 5 = (x=2, y=1) holds block 2*2+1 = 5.
  TensorLayout layout = MakeLayout({8, 2}, P({{"x", "y"}}), MeshXY());
  for (int64_t d = 0; d < 8; ++d) EXPECT_EQ(layout.SliceOf(d), (Ranges{{d, d + 1}, {0, 2}}));
  // P(('y','x')): y major, so device (x, y) holds block y*4 + x.
  TensorLayout reversed = MakeLayout({8, 2}, P({{"y", "x"}}), MeshXY());
  for (int64_t d = 0; d < 8; ++d) {
    const int64_t block = (d % 2) * 4 + d / 2;
    EXPECT_EQ(reversed.SliceOf(d), (Ranges{{block, block + 1}, {0, 2}})) << d;
  }
}

// ---- Copied from jax tests/array_test.py test_shard_shape, test_mesh_pspec_sharding_interface ----

TEST(TensorLayoutTest, ShardShapesOf8x4) {
  const std::vector<std::pair<PartitionSpec, Sizes>> cases = {
      {P({{"x"}, {"y"}}), {2, 2}}, {P({{"x"}}), {2, 4}},      {P({{"y"}}), {4, 4}}, {P({kNone, {"y"}}), {8, 2}},
      {P({kNone, {"x"}}), {8, 1}}, {P({{"x", "y"}}), {1, 4}}, {P(), {8, 4}},
  };
  for (const auto& [spec, shard] : cases) {
    EXPECT_EQ(MakeLayout({8, 4}, spec, MeshXY()).shard_shape(), Shape(shard)) << spec.ToString();
  }
}

TEST(TensorLayoutTest, TransposedSpecTileAssignment) {
  TensorLayout layout = MakeLayout({8, 4}, P({{"y"}, {"x"}}), MeshXY());
  EXPECT_EQ(layout.SliceOf(0), (Ranges{{0, 4}, {0, 1}}));
  EXPECT_EQ(layout.tiles(), (Sizes{2, 4}));
  // HLO tile_assignment_devices [0,2,4,6,1,3,5,7]: the device holding each block, blocks row-major.
  std::map<Ranges, int64_t> holder;
  for (int64_t d = 0; d < 8; ++d) holder[layout.SliceOf(d)] = d;
  Sizes devices;
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 4; ++j) devices.push_back(holder.at(Ranges{{4 * i, 4 * i + 4}, {j, j + 1}}));
  }
  EXPECT_EQ(devices, (Sizes{0, 2, 4, 6, 1, 3, 5, 7}));
}

TEST(TensorLayoutTest, IndivisibleDimFailsConstructionOutsideChunkMode) {  // jax tests/array_test.py: indivisible dims
  for (UnevenMode mode : {UnevenMode::kError, UnevenMode::kReplicate}) {
    StatusOr<TensorLayout> layout = TensorLayout::Make({8, 3}, P({{"x"}, {"y"}}), MeshXY(), mode);
    ASSERT_FALSE(layout.ok());
    EXPECT_EQ(layout.status().kind(), ErrorKind::kInternal);
    EXPECT_EQ(layout.status().diag().message,
              "internal error: TensorLayout P('x', 'y') on [x=4, y=2] for shape [8, 3]: dim 1 of size 3 is not "
              "divisible by 2");
  }
  EXPECT_FALSE(TensorLayout::Make({1, 2}, P({{"x"}, {"y"}}), MakeMesh({{"x", 2}, {"y", 2}}), UnevenMode::kError).ok());
  EXPECT_FALSE(TensorLayout::Make({1}, P({{"x"}}), MakeMesh({{"x", 2}}), UnevenMode::kError).ok());
}

// ---- Copied from jax tests/debugging_primitives_test.py visualize_sharding ----

TEST(TensorLayoutTest, VisualizeShardingTwoDimGrid) {
  Mesh mesh = MakeMesh({{"x", 8}, {"y", 4}});
  TensorLayout layout = MakeLayout({8, 8}, P({{"x"}, {"y"}}), mesh);
  for (int64_t i = 0; i < 8; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      EXPECT_EQ(layout.SliceOf(4 * i + j), (Ranges{{i, i + 1}, {2 * j, 2 * j + 2}}));
    }
  }
  EXPECT_EQ(layout.replicas(), 1);
}

TEST(TensorLayoutTest, VisualizeShardingRowsReplicatedOverY) {
  Mesh mesh = MakeMesh({{"x", 8}, {"y", 4}});
  TensorLayout layout = MakeLayout({8, 8}, P({{"x"}, kNone}), mesh);
  for (int64_t i = 0; i < 8; ++i) {
    for (int64_t d = 4 * i; d < 4 * i + 4; ++d) {
      EXPECT_EQ(layout.SliceOf(d), (Ranges{{i, i + 1}, {0, 8}}));
      EXPECT_EQ(layout.ReplicaId(d), d - 4 * i);
    }
  }
  EXPECT_EQ(layout.replicas(), 4);
}

TEST(TensorLayoutTest, VisualizeShardingColumnsReplicatedOverX) {
  TensorLayout layout = MakeLayout({8, 8}, P({kNone, {"y"}}), MeshXY());
  std::map<Ranges, std::vector<int64_t>> holders;
  for (int64_t d = 0; d < 8; ++d) holders[layout.SliceOf(d)].push_back(d);
  EXPECT_EQ(holders.at(Ranges{{0, 8}, {0, 4}}), (Sizes{0, 2, 4, 6}));
  EXPECT_EQ(holders.at(Ranges{{0, 8}, {4, 8}}), (Sizes{1, 3, 5, 7}));
}

// ---- Size-1 axes and replication (jax/_src/named_sharding.py) ----

TEST(TensorLayoutTest, SizeOneAxesAreNoOps) {
  Mesh mesh = MeshA();  // sp = 1
  TensorLayout tuple = MakeLayout({16, 8}, P({{"fsdp", "sp"}, {"tp"}}), mesh);
  TensorLayout plain = MakeLayout({16, 8}, P({{"fsdp"}, {"tp"}}), mesh);
  for (int64_t d = 0; d < mesh.NumDevices(); ++d) {
    EXPECT_EQ(tuple.SliceOf(d), plain.SliceOf(d));
    EXPECT_EQ(tuple.ReplicaId(d), plain.ReplicaId(d));
  }
  EXPECT_EQ(tuple.tiles(), (Sizes{4, 2}));
  EXPECT_EQ(tuple.replicas(), 1);
}

TEST(TensorLayoutTest, TilesReplicasAndElements) {
  TensorLayout layout = MakeLayout({32, 12}, P({kNone, {"tp"}}), MeshB());
  EXPECT_EQ(layout.tiles(), (Sizes{1, 2}));
  EXPECT_EQ(layout.replicas(), 16);  // dp*fsdp*ep*sp
  EXPECT_EQ(layout.shard_shape(), Shape({32, 6}));
  for (int64_t d = 0; d < 32; ++d) EXPECT_EQ(layout.ElementsOn(d), 32 * 6);
}

// Every even layout: each block appears on `replicas` devices, with replica ids 0..replicas-1 in
// device order, and the distinct blocks tile the tensor.
TEST(TensorLayoutTest, EvenLayoutsPartitionTheTensor) {
  Mesh mesh = MakeMesh({{"a", 2}, {"b", 3}, {"c", 1}, {"d", 2}});
  const std::vector<PartitionSpec> specs = {
      P(),
      P({{"a"}}),
      P({{"d"}, {"b"}}),
      P({{"b", "a"}, {"d", "c"}}),
      P({kNone, {"a", "d", "b"}}),
      P({{"c"}, kNone, {"d", "a"}}),
  };
  for (const PartitionSpec& spec : specs) {
    TensorLayout layout = MakeLayout({12, 12, 4}, spec, mesh);
    std::map<Ranges, int64_t> seen;
    int64_t total = 0;
    for (int64_t d = 0; d < mesh.NumDevices(); ++d) {
      const Ranges slice = layout.SliceOf(d);
      EXPECT_EQ(layout.ReplicaId(d), seen[slice]++) << spec.ToString() << " device " << d;
      if (layout.ReplicaId(d) == 0) total += layout.ElementsOn(d);
    }
    EXPECT_EQ(total, 12 * 12 * 4) << spec.ToString();
    for (const auto& [slice, count] : seen) EXPECT_EQ(count, layout.replicas()) << spec.ToString();
  }
}

// ---- TensorLayout in chunk mode: DTensor vectors (pytorch test/distributed/tensor/test_utils.py) ----

struct Local {
  Sizes shape;
  Sizes offset;
  friend bool operator==(const Local&, const Local&) = default;
};

std::ostream& operator<<(std::ostream& os, const Local& local) {
  os << "((";
  for (int64_t v : local.shape) os << v << ",";
  os << "), (";
  for (int64_t v : local.offset) os << v << ",";
  return os << "))";
}

Local LocalOf(const TensorLayout& layout, int64_t device) {
  Local local;
  for (const Range& range : layout.SliceOf(device)) {
    local.shape.push_back(range.second - range.first);
    local.offset.push_back(range.first);
  }
  return local;
}

Mesh MeshDpTp(int64_t dp, int64_t tp) { return MakeMesh({{"dp", dp}, {"tp", tp}}); }

TEST(ChunkLayoutTest, ShardShardNestsChunksPerAxis) {  // [Shard(0), Shard(0)], (18,2) on (4,2)
  TensorLayout layout = MakeLayout({18, 2}, P({{"dp", "tp"}}), MeshDpTp(4, 2), UnevenMode::kChunk);
  for (int64_t dp = 0; dp < 3; ++dp) {
    EXPECT_EQ(LocalOf(layout, 2 * dp), (Local{{3, 2}, {5 * dp, 0}}));
    EXPECT_EQ(LocalOf(layout, 2 * dp + 1), (Local{{2, 2}, {5 * dp + 3, 0}}));
  }
  EXPECT_EQ(LocalOf(layout, 6), (Local{{2, 2}, {15, 0}}));
  EXPECT_EQ(LocalOf(layout, 7), (Local{{1, 2}, {17, 0}}));
  EXPECT_FALSE(layout.even());
  EXPECT_EQ(layout.shard_shape(), Shape({3, 2}));
  EXPECT_EQ(layout.tiles(), (Sizes{8, 1}));
}

TEST(ChunkLayoutTest, NestedChunkDiffersFromFlatChunk) {
  // Sizes 3,2 | 3,2 | 3,2 | 2,1 — a flat 8-way torch.chunk would give 3,3,3,3,3,3,0,0.
  TensorLayout layout = MakeLayout({18}, P({{"dp", "tp"}}), MeshDpTp(4, 2), UnevenMode::kChunk);
  Sizes sizes;
  for (int64_t d = 0; d < 8; ++d) sizes.push_back(layout.ElementsOn(d));
  EXPECT_EQ(sizes, (Sizes{3, 2, 3, 2, 3, 2, 2, 1}));
}

TEST(ChunkLayoutTest, EmptyShardOffsetIsTheDimSize) {  // [Shard(0), Shard(0)], (13,2) on (4,2)
  TensorLayout layout = MakeLayout({13, 2}, P({{"dp", "tp"}}), MeshDpTp(4, 2), UnevenMode::kChunk);
  for (int64_t dp = 0; dp < 3; ++dp) {
    EXPECT_EQ(LocalOf(layout, 2 * dp), (Local{{2, 2}, {4 * dp, 0}}));
    EXPECT_EQ(LocalOf(layout, 2 * dp + 1), (Local{{2, 2}, {4 * dp + 2, 0}}));
  }
  EXPECT_EQ(LocalOf(layout, 6), (Local{{1, 2}, {12, 0}}));
  EXPECT_EQ(LocalOf(layout, 7), (Local{{0, 2}, {13, 0}}));
  EXPECT_EQ(layout.SliceOf(7), (Ranges{{13, 13}, {0, 2}}));
  EXPECT_EQ(layout.ElementsOn(7), 0);
}

// [_StridedShard(0, split_factor=S), Shard(0)] on mesh (dp, tp) with S = tp size shards tp first:
// it is the JAX tuple entry ('tp', 'dp') chunked per axis.
TEST(ChunkLayoutTest, StridedShardIsTupleInReverseMeshOrder) {  // (4096,4096) on (30,8)
  TensorLayout layout = MakeLayout({4096, 4096}, P({{"tp", "dp"}}), MeshDpTp(30, 8), UnevenMode::kChunk);
  for (int64_t dp = 0; dp < 30; ++dp) {
    for (int64_t tp = 0; tp < 8; ++tp) {
      const int64_t device = 8 * dp + tp;
      Local expected{{18, 4096}, {tp * 512 + 18 * dp, 0}};
      if (dp == 28) expected = {{8, 4096}, {tp * 512 + 18 * dp, 0}};
      if (dp == 29) expected = {{0, 4096}, {4096, 0}};
      EXPECT_EQ(LocalOf(layout, device), expected) << "dp=" << dp << " tp=" << tp;
    }
  }
}

TEST(ChunkLayoutTest, StridedShardSmallCase) {  // [_StridedShard(0, 2), Shard(0)], (18,2) on (4,2)
  TensorLayout layout = MakeLayout({18, 2}, P({{"tp", "dp"}}), MeshDpTp(4, 2), UnevenMode::kChunk);
  for (int64_t dp = 0; dp < 4; ++dp) {
    for (int64_t tp = 0; tp < 2; ++tp) {
      const Local expected = dp < 3 ? Local{{3, 2}, {tp * 9 + 3 * dp, 0}} : Local{{0, 2}, {18, 0}};
      EXPECT_EQ(LocalOf(layout, 2 * dp + tp), expected) << "dp=" << dp << " tp=" << tp;
    }
  }
}

// [Shard(0), _StridedShard(0, split_factor=2)] is not a contiguous JAX block: DTensor reports offsets
// 5dp+2 for tp=1 that overlap tp=0's rows. Only the local shapes coincide with P(('dp','tp')).
TEST(ChunkLayoutTest, ShardThenStridedShardMatchesLocalShapesOnly) {
  TensorLayout layout = MakeLayout({18, 2}, P({{"dp", "tp"}}), MeshDpTp(4, 2), UnevenMode::kChunk);
  const std::vector<Sizes> torch_shapes = {{3, 2}, {2, 2}, {3, 2}, {2, 2}, {3, 2}, {2, 2}, {2, 2}, {1, 2}};
  for (int64_t d = 0; d < 8; ++d) EXPECT_EQ(LocalOf(layout, d).shape, torch_shapes[static_cast<size_t>(d)]);
}

TEST(ChunkLayoutTest, DocstringExampleShardsDimOneTwice) {  // (Shard(1), Shard(1)) of a (2,5) on (2,2)
  TensorLayout layout = MakeLayout({2, 5}, P({kNone, {"a", "b"}}), MakeMesh({{"a", 2}, {"b", 2}}), UnevenMode::kChunk);
  EXPECT_EQ(LocalOf(layout, 0), (Local{{2, 2}, {0, 0}}));
  EXPECT_EQ(LocalOf(layout, 1), (Local{{2, 1}, {0, 2}}));
  EXPECT_EQ(LocalOf(layout, 2), (Local{{2, 1}, {0, 3}}));
  EXPECT_EQ(LocalOf(layout, 3), (Local{{2, 1}, {0, 4}}));
}

// test_compute_local_shape_and_global_offset_1D: sizes 0..2*world over 8 ranks equal torch.chunk
// (ceil-sized leading chunks, a smaller tail, then empty shards).
TEST(ChunkLayoutTest, OneDimMatchesTorchChunk) {
  Mesh mesh = MakeMesh({{"x", 8}});
  for (int64_t size = 0; size <= 16; ++size) {
    TensorLayout layout = MakeLayout({size}, P({{"x"}}), mesh, UnevenMode::kChunk);
    const int64_t chunk = (size + 7) / 8;
    for (int64_t rank = 0; rank < 8; ++rank) {
      const int64_t start = std::min(size, chunk * rank);
      const int64_t length = std::min(size - start, chunk);
      const Range expected = length == 0 ? Range{size, size} : Range{start, start + length};
      EXPECT_EQ(layout.SliceOf(rank), (Ranges{expected})) << "size " << size << " rank " << rank;
    }
  }
}

TEST(ChunkLayoutTest, DivisibleDimsMatchJaxBlocks) {
  Mesh mesh = MeshXY();
  TensorLayout chunk = MakeLayout({16, 6}, P({{"y", "x"}, kNone}), mesh, UnevenMode::kChunk);
  TensorLayout block = MakeLayout({16, 6}, P({{"y", "x"}, kNone}), mesh, UnevenMode::kError);
  for (int64_t d = 0; d < 8; ++d) EXPECT_EQ(chunk.SliceOf(d), block.SliceOf(d));
  EXPECT_TRUE(chunk.even());
}

TEST(ChunkLayoutTest, ReplicaIdNumbersDevicesSharingABlock) {
  Mesh mesh = MakeMesh({{"dp", 2}, {"fsdp", 4}, {"tp", 2}});
  TensorLayout layout = MakeLayout({6}, P({{"fsdp"}}), mesh, UnevenMode::kChunk);
  // fsdp chunks 2,2,2,0; each block lives on the 4 devices of (dp, tp), numbered in device order.
  for (int64_t d = 0; d < 16; ++d) {
    const Sizes c = mesh.Coordinates(d);
    EXPECT_EQ(layout.ReplicaId(d), c[0] * 2 + c[2]) << d;
  }
  EXPECT_EQ(layout.SliceOf(6), (Ranges{{6, 6}}));  // fsdp=3
  EXPECT_EQ(layout.replicas(), 4);
}

// ---- Make: construction errors and scale ----

TEST(TensorLayoutTest, MakeRejectsSpecsThatWereNotCorrected) {
  auto error = [](const Shape& shape, const PartitionSpec& spec) {
    StatusOr<TensorLayout> layout = TensorLayout::Make(shape, spec, MeshXY(), UnevenMode::kChunk);
    EXPECT_FALSE(layout.ok());
    if (layout.ok()) return std::string();
    EXPECT_EQ(layout.status().kind(), ErrorKind::kInternal);
    return layout.status().diag().message;
  };
  EXPECT_EQ(error({8, 8}, P({{"zz"}})),
            "internal error: TensorLayout P('zz') on [x=4, y=2] for shape [8, 8]: unknown mesh axis 'zz'");
  EXPECT_EQ(
      error({8, 8}, P({{"x"}, {"y", "x"}})),
      "internal error: TensorLayout P('x', ('y', 'x')) on [x=4, y=2] for shape [8, 8]: mesh axis 'x' is used twice");
  EXPECT_EQ(
      error({8}, P({{"x"}, kNone})),
      "internal error: TensorLayout P('x', None) on [x=4, y=2] for shape [8]: the spec has more entries than the rank");
}

TEST(TensorLayoutTest, ShapeWhoseElementCountOverflowsIsBadInput) {
  StatusOr<TensorLayout> layout =
      TensorLayout::Make({int64_t{1} << 40, int64_t{1} << 40}, P(), MeshXY(), UnevenMode::kError);
  ASSERT_FALSE(layout.ok());
  EXPECT_EQ(layout.status().kind(), ErrorKind::kBadInput);
  EXPECT_EQ(layout.status().diag().message, "shape [1099511627776, 1099511627776] has more than 2^63-1 elements");
}

TEST(TensorLayoutTest, ScalarLayoutHoldsOneElementEverywhere) {
  TensorLayout layout = MakeLayout(Shape{}, P(), MeshXY());
  EXPECT_TRUE(layout.SliceOf(7).empty());
  EXPECT_EQ(layout.ElementsOn(7), 1);
  EXPECT_EQ(layout.ReplicaId(7), 7);
  EXPECT_EQ(layout.replicas(), 8);
}

TEST(TensorLayoutTest, LargeMeshNeedsNoPerDeviceTables) {
  // 2^16 devices over 16 axes; a slice is computed from coordinates alone.
  std::vector<std::pair<std::string, int64_t>> axes;
  for (int k = 0; k < 16; ++k) axes.emplace_back("a" + std::to_string(k), k < 8 ? 4 : 1);
  Mesh mesh = MakeMesh(axes);
  ASSERT_EQ(mesh.NumDevices(), int64_t{1} << 16);
  const int64_t big = int64_t{1} << 40;
  TensorLayout layout = MakeLayout({big, 3}, P({{"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"}}), mesh);
  const int64_t last = mesh.NumDevices() - 1;
  EXPECT_EQ(layout.SliceOf(last), (Ranges{{big - (big >> 16), big}, {0, 3}}));
  EXPECT_EQ(layout.ElementsOn(last), (big >> 16) * 3);
  EXPECT_EQ(layout.ReplicaId(last), 0);

  TensorLayout chunked = MakeLayout({big + 1, 3}, P({{"a7", "a0"}}), mesh, UnevenMode::kChunk);
  EXPECT_EQ(chunked.shard_shape(), Shape({(big + 1) / 16 + 1, 3}));
  EXPECT_EQ(chunked.SliceOf(0)[0], (Range{0, (big + 1) / 16 + 1}));
}

}  // namespace
}  // namespace easyplan::planner
