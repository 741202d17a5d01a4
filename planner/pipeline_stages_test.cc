#include "planner/pipeline_stages.h"

#include <gtest/gtest.h>

namespace easyplan::planner {
namespace {

ParamTree Tree(const std::vector<std::string>& names) {
  ParamTree tree;
  for (const std::string& name : names) tree.tensors.push_back(TensorEntry{.name = name});
  return tree;
}

TEST(LayerIndexOf, FirstNumericSegmentInEitherLayout) {
  EXPECT_EQ(LayerIndexOf("model/layers/3/mlp/experts/7/w1"), 3);
  EXPECT_EQ(LayerIndexOf("model.layers.12.self_attn.q_proj.weight"), 12);
  EXPECT_EQ(LayerIndexOf("transformer/h/0/attn/c_attn/kernel"), 0);
  EXPECT_EQ(LayerIndexOf("model/embed_tokens/embedding"), std::nullopt);
  EXPECT_EQ(LayerIndexOf("model/layers3/x"), std::nullopt);
}

TEST(PlaceOnStages, LayersOnTheirStageEmbeddingFirstHeadLast) {
  const ParamTree tree = Tree(
      {"model/embed_tokens/embedding", "model/layers/0/w", "model/layers/5/w", "model/norm/scale", "lm_head/kernel"});
  const PipelineSplit split = *SplitLayers(8, 4, 1, PipelineSchedule::k1F1B, {});
  const std::vector<StagePlacement> at = PlaceOnStages(
      tree, split,
      {OuterTensor::kFirst, OuterTensor::kLast, OuterTensor::kLast, OuterTensor::kLast, OuterTensor::kLast});
  EXPECT_EQ(at[0].stage, 0);
  EXPECT_EQ(at[1].stage, 0);
  EXPECT_EQ(at[2].stage, 2);
  EXPECT_EQ(at[3].stage, 3);
  EXPECT_EQ(at[4].stage, 3);
  EXPECT_EQ(at[0].also, -1);
}

TEST(PlaceOnStages, TiedEmbeddingLivesOnTheFirstAndTheLastStage) {
  const ParamTree tree = Tree({"transformer/wte/embedding", "transformer/h/0/w"});
  const PipelineSplit split = *SplitLayers(4, 2, 1, PipelineSchedule::k1F1B, {});
  const std::vector<StagePlacement> at = PlaceOnStages(tree, split, {OuterTensor::kFirstAndLast, OuterTensor::kLast});
  EXPECT_TRUE(at[0].On(0));
  EXPECT_TRUE(at[0].On(1));
  EXPECT_EQ(at[0].Count(), 2);
}

TEST(PlaceOnStages, DualPipeMirrorsEveryStage) {
  const ParamTree tree = Tree({"model/layers/0/w", "model/layers/7/w"});
  const PipelineSplit split = *SplitLayers(8, 4, 1, PipelineSchedule::kDualPipe, {});
  const std::vector<StagePlacement> at = PlaceOnStages(tree, split, {OuterTensor::kLast, OuterTensor::kLast});
  EXPECT_TRUE(at[0].On(0) && at[0].On(3));
  EXPECT_TRUE(at[1].On(3) && at[1].On(0));
  EXPECT_FALSE(at[0].On(1));
}

TEST(PlaceOnStages, WithoutAPipelineEveryTensorIsEverywhere) {
  const ParamTree tree = Tree({"model/layers/0/w"});
  const PipelineSplit none;
  EXPECT_TRUE(PlaceOnStages(tree, none, {OuterTensor::kLast})[0].Everywhere());
}

}  // namespace
}  // namespace easyplan::planner
