#include "planner/export_hlo.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "planner/layout_test_util.h"

namespace easyplan::planner {
namespace {

Mesh M0() { return MakeMesh({{"axis_0", 2}, {"axis_1", 4}, {"axis_2", 4}}); }
Mesh M2() { return MakeMesh({{"x", 8}, {"y", 4}}); }
Mesh M3() { return MakeMesh({{"a", 2}, {"b", 2}, {"c", 2}, {"d", 2}}); }

// ---- Copied from openxla/xla xla/service/spmd/shardy/test/stablehlo_export_pipeline.mlir ----

struct Vector {
  Mesh mesh;
  PartitionSpec spec;
  std::string expected;
};

TEST(ExportHloTest, StablehloExportPipelineVectors) {
  const std::vector<Vector> vectors = {
      {M0(), P({{"axis_2"}, {"axis_0", "axis_1"}}), "{devices=[4,8]<=[8,4]T(1,0)}"},
      {M0(), P({kNone, {"axis_0"}}), "{devices=[1,2,16]<=[32] last_tile_dim_replicate}"},
      {M0(), P({{"axis_1"}, {"axis_2"}}), "{devices=[4,4,2]<=[2,16]T(1,0) last_tile_dim_replicate}"},
      {M0(), P({kNone, {"axis_0", "axis_2"}}), "{devices=[1,8,4]<=[2,4,4]T(0,2,1) last_tile_dim_replicate}"},
      {M0(), P({kNone, {"axis_1"}}), "{devices=[1,4,8]<=[2,4,4]T(1,0,2) last_tile_dim_replicate}"},
      {M0(), P({{"axis_0", "axis_1"}, {"axis_2"}}), "{devices=[8,4]<=[32]}"},
      {M0(), P({{"axis_1", "axis_0"}, kNone}), "{devices=[8,1,4]<=[2,4,4]T(1,0,2) last_tile_dim_replicate}"},
      // sdy had an explicit replicated={"axis_1"}: the same as leaving axis_1 out of the spec.
      {M0(), P({{"axis_0"}, {"axis_2"}}), "{devices=[2,4,4]<=[2,4,4]T(0,2,1) last_tile_dim_replicate}"},
      {MakeMesh({{"axis_0", 16}}), P({{"axis_0"}, kNone}), "{devices=[16,1]<=[16]}"},
      {M2(), P({kNone, {"y"}}), "{devices=[1,4,8]<=[8,4]T(1,0) last_tile_dim_replicate}"},
      {M2(), P({{"y"}, kNone}), "{devices=[4,1,8]<=[8,4]T(1,0) last_tile_dim_replicate}"},
      {M2(), P({kNone, kNone}), "{replicated}"},
      {M2(), P({{"x"}, kNone}), "{devices=[8,1,4]<=[32] last_tile_dim_replicate}"},
      {M2(), P({{"x"}, {"y"}}), "{devices=[8,4]<=[32]}"},
      {M2(), P({{"y", "x"}, kNone}), "{devices=[32,1]<=[8,4]T(1,0)}"},
      {M3(), P({{"a"}, {"b"}}), "{devices=[2,2,4]<=[16] last_tile_dim_replicate}"},
      {M3(), P({{"b"}, kNone}), "{devices=[2,1,8]<=[2,2,4]T(1,0,2) last_tile_dim_replicate}"},
      {M3(), P({{"a"}, kNone}), "{devices=[2,1,8]<=[16] last_tile_dim_replicate}"},
      {M3(), P({{"b"}, {"a"}}), "{devices=[2,2,4]<=[2,2,4]T(1,0,2) last_tile_dim_replicate}"},
      {MakeMesh({{"x", 2}, {"y", 4}}), P({{"x"}, {"y"}}), "{devices=[2,4]<=[8]}"},
  };
  for (const Vector& v : vectors) {
    EXPECT_EQ(HloShardingText(v.mesh, v.spec, 2), v.expected) << v.spec.ToString() << " on " << v.mesh.ToString();
  }
}

TEST(ExportHloTest, ManualAndUnreducedAxes) {
  // m3 with manual={a, b}, P(None, None).
  EXPECT_EQ(HloShardingText(M3(), P({kNone, kNone}), 2, {"a", "b"}),
            "{devices=[1,1,4,4]<=[16] last_tile_dims={manual, replicated}}");
  // x=2, y=4: P('x', None, unreduced={'y'}) (XLA adds sdy::reduction_op metadata, not emitted here).
  EXPECT_EQ(HloShardingText(MakeMesh({{"x", 2}, {"y", 4}}), P({{"x"}, kNone}), 2, {}, {"y"}),
            "{devices=[2,1,4]<=[8] last_tile_dims={unreduced}}");
}

TEST(ExportHloTest, SubAxesAsAtomicAxes) {
  // m2 = x=8, y=4 with x split into x:(1)2, x:(2)2, x:(4)2 -> atomic axes [2, 2, 2, 4].
  const std::vector<int64_t> split = {2, 2, 2, 4};
  // [{"y"}, {"x":(2)2}]
  EXPECT_EQ(HloShardingText(AtomicAxesSharding{split, {{3}, {1}}, {}, {}}),
            "{devices=[4,2,4]<=[2,2,2,4]T(3,1,0,2) last_tile_dim_replicate}");
  // [{"x":(1)2}, {"x":(2)4}]: x split into (1)2 and (2)4 -> atomic [2, 4, 4].
  EXPECT_EQ(HloShardingText(AtomicAxesSharding{{2, 4, 4}, {{0}, {1}}, {}, {}}),
            "{devices=[2,4,4]<=[32] last_tile_dim_replicate}");
  // [{"x":(1)2, "x":(4)2}, {}]
  EXPECT_EQ(HloShardingText(AtomicAxesSharding{split, {{0, 2}, {}}, {}, {}}),
            "{devices=[4,1,8]<=[2,2,2,4]T(0,2,1,3) last_tile_dim_replicate}");
}

TEST(ExportHloTest, TupleOfResults) {
  const Mesh m2 = M2();
  EXPECT_EQ(HloTupleText({HloShardingText(m2, P({kNone, {"y"}}), 2), HloShardingText(m2, P({{"y"}, kNone}), 2)}),
            "{{devices=[1,4,8]<=[8,4]T(1,0) last_tile_dim_replicate}, "
            "{devices=[4,1,8]<=[8,4]T(1,0) last_tile_dim_replicate}}");
  EXPECT_EQ(HloTupleText({"{replicated}", "{replicated}", "{replicated}", "{replicated}", "{replicated}", "{manual}"}),
            "{{replicated}, {replicated}, {replicated}, {replicated}, {replicated}, /*index=5*/{manual}}");
}

// ---- Copied from jax tests and xla xla/hlo/ir/tile_assignment_test.cc, hlo_sharding_test.cc ----

TEST(ExportHloTest, JaxTestVectors) {
  const Mesh xy = MakeMesh({{"x", 2}, {"y", 2}});
  EXPECT_EQ(HloShardingText(xy, P({{"x"}, {"y"}}), 2), "{devices=[2,2]<=[4]}");
  EXPECT_EQ(HloShardingText(xy, P({{"x"}}), 1), "{devices=[2,2]<=[4] last_tile_dim_replicate}");
  // Size-1 y is dropped by GSPMD lowering.
  EXPECT_EQ(HloShardingText(MakeMesh({{"x", 2}, {"y", 1}}), P({{"x"}, {"y"}}), 2), "{devices=[2,1]<=[2]}");
  EXPECT_EQ(HloShardingText(xy, P(), 2), "{replicated}");
  // tests/export_test.py
  const Mesh x2 = MakeMesh({{"x", 2}});
  EXPECT_EQ(HloShardingText(x2, P({kNone, {"x"}}), 2), "{devices=[1,2]<=[2]}");
  EXPECT_EQ(HloShardingText(x2, P({{"x"}, kNone}), 2), "{devices=[2,1]<=[2]}");
  // tests/shard_map_test.py
  const Mesh ij = MakeMesh({{"i", 2}, {"j", 2}});
  EXPECT_EQ(HloShardingText(ij, P({kNone, {"j"}}), 2, {"i"}), "{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dims={manual}}");
  EXPECT_EQ(HloShardingText(ij, P(), 2, {"i"}), "{devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}");
  EXPECT_EQ(HloShardingText(MakeMesh({{"i", 2}, {"j", 2}, {"k", 2}}), P(), 2, {"j", "k"}),
            "{devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}");
  // tests/array_test.py: iota dims=[6,35], reshape=[7,10,3], perm=[2,1,0]; get_axis_sizes() == [7,2,5,3],
  // i.e. atomic axes 7, 2, 5, 3 with dim 0 = (3, 2) and dim 1 = (5, 7).
  EXPECT_EQ(HloShardingText(AtomicAxesSharding{{7, 2, 5, 3}, {{3, 1}, {2, 0}}, {}, {}}),
            "{devices=[6,35]<=[7,10,3]T(2,1,0)}");
  EXPECT_EQ(IotaTileAssignmentText({6, 35}, {7, 10, 3}, {2, 1, 0}), "devices=[6,35]<=[7,10,3]T(2,1,0)");
  // OpSharding(dims=[4,1,2], devices=0..7, replicate_on_last_tile_dim) in its V1 list form.
  EXPECT_EQ("{" + ExplicitTileAssignmentText({4, 1, 2}, {0, 1, 2, 3, 4, 5, 6, 7}) + " last_tile_dim_replicate}",
            "{devices=[4,1,2]0,1,2,3,4,5,6,7 last_tile_dim_replicate}");
}

TEST(ExportHloTest, XlaTileAssignmentVectors) {
  EXPECT_EQ(IotaTileAssignmentText({2, 3}, {6}, {0}), "devices=[2,3]<=[6]");
  EXPECT_EQ(IotaTileAssignmentText({2, 6}, {3, 4}, {0, 1}), "devices=[2,6]<=[12]");
  EXPECT_EQ(IotaTileAssignmentText({3, 4, 5}, {3, 4, 5}, {2, 0, 1}), "devices=[3,4,5]<=[12,5]T(1,0)");
  EXPECT_EQ(IotaTileAssignmentDevices({2, 3}, {1, 0}), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(ExplicitTileAssignmentText({2, 2}, {0, 1, 2, 3}), "devices=[2,2]0,1,2,3");
  // hlo_sharding_test.cc Replicate(): what P() and all-None specs give.
  EXPECT_EQ(HloShardingText(M2(), P(), 0), "{replicated}");
}

TEST(ExportHloTest, CanonicalisationExamples) {
  // CanonicalizeIotaDims examples (xla xla/hlo/ir/tile_assignment.cc).
  EXPECT_EQ(IotaTileAssignmentText({60}, {3, 4, 5}, {2, 0, 1}), "devices=[60]<=[12,5]T(1,0)");
  EXPECT_EQ(IotaTileAssignmentText({60}, {3, 4, 5}, {1, 2, 0}), "devices=[60]<=[3,20]T(1,0)");
  EXPECT_EQ(IotaTileAssignmentText({60}, {1, 3, 1, 4, 1, 5}, {4, 3, 2, 5, 1, 0}), "devices=[60]<=[3,20]T(1,0)");
  EXPECT_EQ(IotaTileAssignmentText({24}, {2, 3, 4}, {0, 1, 2}), "devices=[24]<=[24]");
}

// ---- a parser for the printed form, and a device-by-device comparison with the layout ----

struct ParsedHlo {
  bool replicated = false;
  std::vector<int64_t> dims;
  std::vector<int64_t> devices;  // row-major over dims
  bool last_tile_dim_replicate = false;
};

std::vector<int64_t> ParseInts(const std::string& text, char sep) {
  std::vector<int64_t> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, sep);) out.push_back(std::stoll(item));
  return out;
}

ParsedHlo ParseHlo(const std::string& text) {
  ParsedHlo out;
  if (text == "{replicated}") {
    out.replicated = true;
    return out;
  }
  EXPECT_EQ(text.rfind("{devices=[", 0), 0u) << text;
  size_t at = 10;
  size_t close = text.find(']', at);
  out.dims = ParseInts(text.substr(at, close - at), ',');
  at = close + 1;
  if (text.compare(at, 3, "<=[") == 0) {
    at += 3;
    close = text.find(']', at);
    const std::vector<int64_t> reshape = ParseInts(text.substr(at, close - at), ',');
    at = close + 1;
    std::vector<int> perm(reshape.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int>(i);
    if (text.compare(at, 2, "T(") == 0) {
      at += 2;
      close = text.find(')', at);
      perm.clear();
      for (int64_t p : ParseInts(text.substr(at, close - at), ',')) perm.push_back(static_cast<int>(p));
      at = close + 1;
    }
    out.devices = IotaTileAssignmentDevices(reshape, perm);
  } else {
    const size_t end = text.find_first_of(" }", at);
    out.devices = ParseInts(text.substr(at, end - at), ',');
    at = end;
  }
  out.last_tile_dim_replicate = text.find(" last_tile_dim_replicate", at) != std::string::npos;
  return out;
}

TEST(ExportHloTest, RoundTripAgreesWithLayoutDeviceByDevice) {
  const Mesh mesh = MakeMesh({{"dp", 2}, {"fsdp", 4}, {"ep", 1}, {"tp", 2}, {"sp", 3}});
  const Shape shape{48, 24, 12};
  const std::vector<PartitionSpec> specs = {
      P(),
      P({{"fsdp"}}),
      P({{"fsdp", "sp"}, {"tp"}}),
      P({{"sp", "fsdp"}, kNone, {"tp", "dp"}}),
      P({kNone, {"tp"}, {"fsdp"}}),
      P({{"tp", "ep", "dp"}, {"sp"}, {"fsdp"}}),
      P({{"dp", "fsdp", "tp", "sp"}}),
  };
  for (const PartitionSpec& spec : specs) {
    const std::string text = HloShardingText(mesh, spec, shape.rank());
    const ParsedHlo parsed = ParseHlo(text);
    const TensorLayout layout = MakeLayout(shape, spec, mesh, UnevenMode::kError);
    if (parsed.replicated) {
      EXPECT_TRUE(spec.IsReplicated()) << text;
      continue;
    }
    // Walk the tile assignment: each position is a device; its tile index gives the slice.
    const size_t data_rank = static_cast<size_t>(shape.rank());
    ASSERT_EQ(parsed.dims.size(), data_rank + (parsed.last_tile_dim_replicate ? 1 : 0)) << text;
    std::vector<int64_t> index(parsed.dims.size(), 0);
    for (int64_t device : parsed.devices) {
      const std::vector<Range> slice = layout.SliceOf(device);
      for (size_t d = 0; d < data_rank; ++d) {
        const int64_t length = shape[static_cast<int>(d)] / parsed.dims[d];
        EXPECT_EQ(slice[d], Range(index[d] * length, index[d] * length + length))
            << text << " device " << device << " dim " << d;
      }
      for (size_t i = index.size(); i-- > 0;) {
        if (++index[i] < parsed.dims[i]) break;
        index[i] = 0;
      }
    }
  }
}

}  // namespace
}  // namespace easyplan::planner
