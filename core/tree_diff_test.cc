#include "core/tree_diff.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace easyplan {
namespace {

TensorEntry Entry(std::string name, Shape shape, DType dtype = DType::kBFloat16,
                  TensorRole role = TensorRole::kParameter) {
  return TensorEntry{std::move(name), std::move(shape), dtype, role};
}

CheckpointTensor Stored(std::string name, Shape shape, DType dtype = DType::kBFloat16) {
  return CheckpointTensor{Entry(std::move(name), std::move(shape), dtype), true, "model.safetensors"};
}

CheckpointTensor NameOnly(std::string name) {
  return CheckpointTensor{TensorEntry{std::move(name), Shape{}, DType::kFloat32, TensorRole::kParameter}, false,
                          "pytorch_model-00001-of-00002.bin"};
}

ParamTree Expected(std::vector<TensorEntry> tensors) {
  ParamTree tree;
  tree.model_type = "toy";
  tree.layout = Layout::kHf;
  tree.tensors = std::move(tensors);
  return tree;
}

Checkpoint MakeCheckpoint(std::vector<CheckpointTensor> tensors, std::optional<int64_t> total_size = std::nullopt) {
  Checkpoint checkpoint;
  checkpoint.source = "ckpt/model.safetensors.index.json";
  checkpoint.tensors = std::move(tensors);
  checkpoint.index_total_size = total_size;
  return checkpoint;
}

using Kind = TreeDifference::Kind;

std::vector<std::pair<Kind, std::string>> Summary(const TreeDiff& diff) {
  std::vector<std::pair<Kind, std::string>> out;
  for (const TreeDifference& item : diff.differences) out.emplace_back(item.kind, item.name);
  return out;
}

TEST(TreeDiffTest, IdenticalTreesAreClean) {
  ParamTree expected = Expected({Entry("a.weight", Shape{4, 2}), Entry("a.bias", Shape{4})});
  TreeDiff diff = DiffTrees(expected, MakeCheckpoint({Stored("a.bias", Shape{4}), Stored("a.weight", Shape{4, 2})}));
  EXPECT_TRUE(diff.Clean());
  EXPECT_EQ(diff.checkpoint, "ckpt/model.safetensors.index.json");
  EXPECT_EQ(diff.expected_tensors, 2);
  EXPECT_EQ(diff.checkpoint_tensors, 2);
  EXPECT_EQ(diff.names_only, 0);
}

TEST(TreeDiffTest, ReportsMissingExtraShapeAndDType) {
  ParamTree expected = Expected({Entry("a", Shape{4}), Entry("b", Shape{4, 2}), Entry("c", Shape{3}),
                                 Entry("d", Shape{2}, DType::kFloat8E4M3FN)});
  Checkpoint checkpoint = MakeCheckpoint({Stored("b", Shape{2, 4}), Stored("c", Shape{3}, DType::kFloat32),
                                          Stored("d", Shape{2}, DType::kFloat8E4M3FN), Stored("z", Shape{1})});
  TreeDiff diff = DiffTrees(expected, checkpoint);
  ASSERT_EQ(diff.differences.size(), 4u);
  const TreeDifference& missing = diff.differences[0];
  EXPECT_EQ(missing.kind, Kind::kMissing);
  EXPECT_EQ(missing.name, "a");
  EXPECT_EQ(missing.expected, Entry("a", Shape{4}));
  EXPECT_FALSE(missing.found.has_value());
  const TreeDifference& shape = diff.differences[1];
  EXPECT_EQ(shape.kind, Kind::kShape);
  EXPECT_EQ(shape.expected->shape, (Shape{4, 2}));
  EXPECT_EQ(shape.found->shape, (Shape{2, 4}));
  const TreeDifference& dtype = diff.differences[2];
  EXPECT_EQ(dtype.kind, Kind::kDType);
  EXPECT_EQ(dtype.name, "c");
  EXPECT_EQ(dtype.expected->dtype, DType::kBFloat16);
  EXPECT_EQ(dtype.found->dtype, DType::kFloat32);
  const TreeDifference& extra = diff.differences[3];
  EXPECT_EQ(extra.kind, Kind::kExtra);
  EXPECT_EQ(extra.name, "z");
  EXPECT_FALSE(extra.expected.has_value());
  EXPECT_EQ(extra.found, Entry("z", Shape{1}));
  EXPECT_FALSE(diff.Clean());
}

TEST(TreeDiffTest, ShapeMismatchHidesADTypeMismatch) {
  TreeDiff diff = DiffTrees(Expected({Entry("a", Shape{4})}), MakeCheckpoint({Stored("a", Shape{5}, DType::kInt8)}));
  EXPECT_EQ(Summary(diff), (std::vector<std::pair<Kind, std::string>>{{Kind::kShape, "a"}}));
}

TEST(TreeDiffTest, BuffersTheCheckpointDoesNotStoreAreNotDifferences) {
  ParamTree expected =
      Expected({Entry("w", Shape{4}), Entry("rotary.inv_freq", Shape{2}, DType::kFloat32, TensorRole::kBuffer),
                Entry("mask", Shape{1, 1, 4, 4}, DType::kBool, TensorRole::kBuffer)});
  // mask is stored with another shape: a stored buffer is compared like any tensor.
  TreeDiff diff = DiffTrees(expected, MakeCheckpoint({Stored("w", Shape{4}), Stored("mask", Shape{1, 1, 8, 8})}));
  EXPECT_EQ(Summary(diff), (std::vector<std::pair<Kind, std::string>>{{Kind::kShape, "mask"}}));
  // A missing parameter or FP8 scale still is one.
  ParamTree scaled =
      Expected({Entry("w", Shape{4}), Entry("w_scale_inv", Shape{1}, DType::kFloat32, TensorRole::kScale)});
  EXPECT_EQ(Summary(DiffTrees(scaled, MakeCheckpoint({Stored("w", Shape{4})}))),
            (std::vector<std::pair<Kind, std::string>>{{Kind::kMissing, "w_scale_inv"}}));
}

TEST(TreeDiffTest, NamesOnlyTensorsAreComparedByNameOnly) {
  ParamTree expected = Expected({Entry("a", Shape{4}), Entry("b", Shape{4}), Entry("c", Shape{2})});
  Checkpoint checkpoint = MakeCheckpoint({NameOnly("a"), Stored("b", Shape{4}), NameOnly("x")});
  checkpoint.missing_shards = {"pytorch_model-00001-of-00002.bin"};
  TreeDiff diff = DiffTrees(expected, checkpoint);
  EXPECT_EQ(diff.names_only, 2);
  EXPECT_EQ(diff.missing_shards, checkpoint.missing_shards);
  // "a" has a meaningless empty shape in the checkpoint: not a shape mismatch.
  EXPECT_EQ(Summary(diff), (std::vector<std::pair<Kind, std::string>>{{Kind::kMissing, "c"}, {Kind::kExtra, "x"}}));
  EXPECT_FALSE(diff.differences[1].found.has_value());  // an extra known by name only has no entry to show
}

TEST(TreeDiffTest, TotalSizeMismatchIsReportedWhenTheNamesAgree) {
  ParamTree expected = Expected({Entry("a", Shape{4, 2}), Entry("b", Shape{3}, DType::kFloat32),
                                 Entry("inv_freq", Shape{8}, DType::kFloat32, TensorRole::kBuffer)});
  // 16 + 12 bytes; the unstored buffer does not count.
  std::vector<CheckpointTensor> names = {NameOnly("a"), NameOnly("b")};
  EXPECT_TRUE(DiffTrees(expected, MakeCheckpoint(names, 28)).Clean());
  EXPECT_TRUE(DiffTrees(expected, MakeCheckpoint(names)).Clean());  // no index total: nothing to compare
  TreeDiff diff = DiffTrees(expected, MakeCheckpoint(names, 30));
  ASSERT_EQ(diff.differences.size(), 1u);
  const TreeDifference& size = diff.differences[0];
  EXPECT_EQ(size.kind, Kind::kTotalSize);
  EXPECT_EQ(size.name, "");
  EXPECT_EQ(size.expected_bytes, 28);
  EXPECT_EQ(size.found_bytes, 30);
  // A stored buffer counts towards the total.
  std::vector<CheckpointTensor> with_buffer = {NameOnly("a"), NameOnly("b"), NameOnly("inv_freq")};
  EXPECT_TRUE(DiffTrees(expected, MakeCheckpoint(with_buffer, 60)).Clean());
}

TEST(TreeDiffTest, TotalSizeIsNotReportedWhenTheNamesDisagree) {
  ParamTree expected = Expected({Entry("a", Shape{4}), Entry("b", Shape{4})});
  TreeDiff missing = DiffTrees(expected, MakeCheckpoint({NameOnly("a")}, 1000));
  EXPECT_EQ(Summary(missing), (std::vector<std::pair<Kind, std::string>>{{Kind::kMissing, "b"}}));
  TreeDiff extra = DiffTrees(expected, MakeCheckpoint({NameOnly("a"), NameOnly("b"), NameOnly("c")}, 1000));
  EXPECT_EQ(Summary(extra), (std::vector<std::pair<Kind, std::string>>{{Kind::kExtra, "c"}}));
}

TEST(TreeDiffTest, DifferencesAreInTemplateOrderThenExtrasInCheckpointOrder) {
  ParamTree expected = Expected({Entry("t3", Shape{1}), Entry("t1", Shape{1}), Entry("t2", Shape{1})});
  Checkpoint checkpoint =
      MakeCheckpoint({Stored("x2", Shape{1}), Stored("t2", Shape{2}), Stored("x1", Shape{1}), Stored("t3", Shape{5})});
  EXPECT_EQ(Summary(DiffTrees(expected, checkpoint)),
            (std::vector<std::pair<Kind, std::string>>{{Kind::kShape, "t3"},
                                                       {Kind::kMissing, "t1"},
                                                       {Kind::kShape, "t2"},
                                                       {Kind::kExtra, "x2"},
                                                       {Kind::kExtra, "x1"}}));
}

TEST(TreeDiffTest, KindNames) {
  EXPECT_EQ(TreeDifferenceKindName(Kind::kMissing), "missing");
  EXPECT_EQ(TreeDifferenceKindName(Kind::kExtra), "extra");
  EXPECT_EQ(TreeDifferenceKindName(Kind::kShape), "shape");
  EXPECT_EQ(TreeDifferenceKindName(Kind::kDType), "dtype");
  EXPECT_EQ(TreeDifferenceKindName(Kind::kTotalSize), "total_size");
}

}  // namespace
}  // namespace easyplan
