#include "planner/export_dtensor.h"

#include <gtest/gtest.h>

#include "planner/layout_test_util.h"

namespace easyplan::planner {
namespace {

using Ints = std::vector<int64_t>;

LocalShard At(Ints global, Ints mesh, Ints coordinate, std::vector<Placement> placements) {
  return LocalShapeAndOffset(global, mesh, coordinate, placements);
}

LocalShard Shard2(int64_t rows, int64_t offset) { return LocalShard{{rows, 2}, {offset, 0}}; }

const Placement S0 = Placement::Shard(0);

// Copied from pytorch test/distributed/tensor/test_utils.py,
// LocalTest.test_compute_local_shape_and_global_offset_uneven.
TEST(ExportDTensorTest, UnevenShardShard) {
  for (int64_t dp = 0; dp < 4; ++dp) {
    const LocalShard tp0 = At({18, 2}, {4, 2}, {dp, 0}, {S0, S0});
    const LocalShard tp1 = At({18, 2}, {4, 2}, {dp, 1}, {S0, S0});
    if (dp < 3) {
      EXPECT_EQ(tp0, Shard2(3, 5 * dp));
      EXPECT_EQ(tp1, Shard2(2, 5 * dp + 3));
    } else {
      EXPECT_EQ(tp0, Shard2(2, 15));
      EXPECT_EQ(tp1, Shard2(1, 17));
    }
  }
  for (int64_t dp = 0; dp < 4; ++dp) {
    const LocalShard tp0 = At({13, 2}, {4, 2}, {dp, 0}, {S0, S0});
    const LocalShard tp1 = At({13, 2}, {4, 2}, {dp, 1}, {S0, S0});
    if (dp < 3) {
      EXPECT_EQ(tp0, Shard2(2, 4 * dp));
      EXPECT_EQ(tp1, Shard2(2, 4 * dp + 2));
    } else {
      EXPECT_EQ(tp0, Shard2(1, 12));
      EXPECT_EQ(tp1, Shard2(0, 13));  // empty: the offset is the global size
    }
  }
}

TEST(ExportDTensorTest, UnevenStridedShard) {
  for (int64_t dp = 0; dp < 30; ++dp) {
    for (int64_t tp = 0; tp < 8; ++tp) {
      const LocalShard shard = At({4096, 4096}, {30, 8}, {dp, tp}, {Placement::StridedShard(0, 8), S0});
      if (dp < 28) {
        EXPECT_EQ(shard, (LocalShard{{18, 4096}, {tp * 512 + 18 * dp, 0}})) << dp << "," << tp;
      } else if (dp == 28) {
        EXPECT_EQ(shard, (LocalShard{{8, 4096}, {tp * 512 + 18 * dp, 0}})) << dp << "," << tp;
      } else {
        EXPECT_EQ(shard, (LocalShard{{0, 4096}, {4096, 0}})) << dp << "," << tp;
      }
    }
  }
  for (int64_t dp = 0; dp < 4; ++dp) {
    for (int64_t tp = 0; tp < 2; ++tp) {
      const LocalShard shard = At({18, 2}, {4, 2}, {dp, tp}, {Placement::StridedShard(0, 2), S0});
      EXPECT_EQ(shard, dp < 3 ? Shard2(3, tp * 9 + 3 * dp) : Shard2(0, 18)) << dp << "," << tp;
    }
  }
  for (int64_t dp = 0; dp < 4; ++dp) {
    const LocalShard tp0 = At({18, 2}, {4, 2}, {dp, 0}, {S0, Placement::StridedShard(0, 2)});
    const LocalShard tp1 = At({18, 2}, {4, 2}, {dp, 1}, {S0, Placement::StridedShard(0, 2)});
    if (dp < 3) {
      EXPECT_EQ(tp0, Shard2(3, 5 * dp));
      EXPECT_EQ(tp1, Shard2(2, 5 * dp + 2));
    } else {
      EXPECT_EQ(tp0, Shard2(2, 15));
      EXPECT_EQ(tp1, Shard2(1, 16));
    }
  }
}

TEST(ExportDTensorTest, DocstringExample) {
  // [[0..4], [10..14]] on mesh (2, 2) with (Shard(1), Shard(1)).
  const std::vector<Placement> s1s1 = {Placement::Shard(1), Placement::Shard(1)};
  EXPECT_EQ(At({2, 5}, {2, 2}, {0, 0}, s1s1), (LocalShard{{2, 2}, {0, 0}}));
  EXPECT_EQ(At({2, 5}, {2, 2}, {0, 1}, s1s1), (LocalShard{{2, 1}, {0, 2}}));
  EXPECT_EQ(At({2, 5}, {2, 2}, {1, 0}, s1s1), (LocalShard{{2, 1}, {0, 3}}));
  EXPECT_EQ(At({2, 5}, {2, 2}, {1, 1}, s1s1), (LocalShard{{2, 1}, {0, 4}}));
}

TEST(ExportDTensorTest, OneDimensionalChunks) {
  // test_compute_local_shape_and_global_offset_1D: sizes 0..16 over 8 ranks, torch.chunk sizes.
  for (int64_t size = 0; size <= 16; ++size) {
    const int64_t chunk = (size + 7) / 8;
    int64_t covered = 0;
    for (int64_t rank = 0; rank < 8; ++rank) {
      const LocalShard shard = At({size}, {8}, {rank}, {S0});
      const int64_t expected = std::max<int64_t>(0, std::min(chunk, size - chunk * rank));
      EXPECT_EQ(shard.shape[0], expected) << size << " rank " << rank;
      if (expected > 0) {
        EXPECT_EQ(shard.offset[0], covered);
      }
      covered += expected;
    }
    EXPECT_EQ(covered, size);
  }
}

TEST(ExportDTensorTest, PlacementsFromSpecs) {
  const Mesh mesh = MakeMesh({{"dp", 1}, {"fsdp", 4}, {"ep", 1}, {"tp", 2}, {"sp", 2}});
  const DTensorPlacements p = PlacementsFor(mesh, P({{"fsdp", "sp"}, {"tp"}}));
  ASSERT_TRUE(p.reason.empty()) << p.reason;
  std::vector<std::string> text;
  for (const Placement& placement : p.placements) text.push_back(placement.ToString());
  EXPECT_EQ(text,
            (std::vector<std::string>{"Replicate()", "Shard(dim=0)", "Replicate()", "Shard(dim=1)", "Shard(dim=0)"}));

  const DTensorPlacements bad = PlacementsFor(mesh, P({{"sp", "fsdp"}, kNone}));
  EXPECT_TRUE(bad.placements.empty());
  EXPECT_EQ(bad.reason,
            "dim 0 is sharded by ('sp', 'fsdp') with 'sp' major, but 'sp' comes after 'fsdp' in the mesh; DTensor "
            "applies mesh dims in mesh order, so plain Shard placements would make 'fsdp' major (torch would need "
            "_StridedShard)");
  // A size-1 axis splits nothing, so its place in the tuple does not matter.
  EXPECT_TRUE(PlacementsFor(mesh, P({{"ep", "fsdp"}})).reason.empty());
  EXPECT_EQ(Placement::StridedShard(0, 2).ToString(), "_StridedShard(dim=0, sf=2)");
}

TEST(ExportDTensorTest, ExpressibleSpecsMatchTheLayoutOnEveryDevice) {
  const Mesh mesh = MakeMesh({{"dp", 2}, {"fsdp", 2}, {"tp", 3}});
  const Shape shape{13, 12, 7};
  const std::vector<PartitionSpec> specs = {P({{"dp", "fsdp"}, {"tp"}}), P({kNone, {"fsdp"}, {"tp"}}),
                                            P({{"fsdp", "tp"}}), P()};
  for (const PartitionSpec& spec : specs) {
    const DTensorPlacements p = PlacementsFor(mesh, spec);
    ASSERT_TRUE(p.reason.empty());
    const TensorLayout layout = MakeLayout(shape, spec, mesh, UnevenMode::kChunk);
    for (int64_t device = 0; device < mesh.NumDevices(); ++device) {
      const LocalShard shard = At({13, 12, 7}, mesh.shape, mesh.Coordinates(device), p.placements);
      const std::vector<Range> slice = layout.SliceOf(device);
      for (size_t d = 0; d < 3; ++d) {
        EXPECT_EQ(shard.shape[d], slice[d].second - slice[d].first) << spec.ToString() << " device " << device;
        EXPECT_EQ(shard.offset[d], slice[d].first) << spec.ToString() << " device " << device;
      }
    }
  }
}

}  // namespace
}  // namespace easyplan::planner
