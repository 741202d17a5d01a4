#include "planner/pipeline.h"

#include <gtest/gtest.h>

namespace easyplan::planner {
namespace {

PipelineSplit Split(int64_t layers, int64_t p, PipelineSchedule s = PipelineSchedule::k1F1B, int64_t v = 1) {
  StatusOr<PipelineSplit> split = SplitLayers(layers, p, v, s, {});
  EXPECT_TRUE(split.ok()) << split.status().ToString();
  return split.ok() ? *split : PipelineSplit();
}

TEST(SplitLayers, EqualCountsWhenTheyDivide) {
  const PipelineSplit split = Split(32, 4);
  EXPECT_EQ(split.chunk_layers, (std::vector<int64_t>{8, 8, 8, 8}));
  EXPECT_FALSE(split.balanced_by_us);
  EXPECT_EQ(split.StageOfLayer(0), 0);
  EXPECT_EQ(split.StageOfLayer(8), 1);
  EXPECT_EQ(split.StageOfLayer(31), 3);
}

TEST(SplitLayers, ExtraLayersGoToTheMiddleStagesAndTheSplitSaysSo) {
  const PipelineSplit split = Split(126, 16);
  std::vector<int64_t> expected(16, 8);
  expected.front() = 7;
  expected.back() = 7;
  EXPECT_EQ(split.chunk_layers, expected);
  EXPECT_TRUE(split.balanced_by_us);
  EXPECT_NE(split.how.find("--pp-layers 7,8,8"), std::string::npos) << split.how;
}

TEST(SplitLayers, ExplicitCountsMustMatchTheStagesAndTheModel) {
  EXPECT_TRUE(SplitLayers(32, 4, 1, PipelineSchedule::k1F1B, {9, 8, 8, 7}).ok());
  StatusOr<PipelineSplit> short_list = SplitLayers(32, 4, 1, PipelineSchedule::k1F1B, {16, 16});
  ASSERT_FALSE(short_list.ok());
  EXPECT_NE(short_list.status().diag().message.find("gives 2 counts, and the pipeline has 4 stages"),
            std::string::npos);
  StatusOr<PipelineSplit> wrong_sum = SplitLayers(32, 4, 1, PipelineSchedule::k1F1B, {9, 9, 8, 7});
  ASSERT_FALSE(wrong_sum.ok());
  EXPECT_NE(wrong_sum.status().diag().message.find("sums to 33 layers, and the model has 32"), std::string::npos);
}

TEST(SplitLayers, MoreStagesThanLayersIsRefused) {
  StatusOr<PipelineSplit> split = SplitLayers(4, 8, 1, PipelineSchedule::k1F1B, {});
  ASSERT_FALSE(split.ok());
  EXPECT_NE(split.status().diag().message.find("a stage would hold none"), std::string::npos);
}

TEST(SplitLayers, VirtualStagesNeedTheInterleavedSchedule) {
  EXPECT_FALSE(SplitLayers(32, 4, 2, PipelineSchedule::k1F1B, {}).ok());
  const PipelineSplit split = Split(32, 4, PipelineSchedule::kInterleaved, 2);
  EXPECT_EQ(split.Chunks(), 8);
  // Chunk c runs on stage c % p: stage 0 holds layers 0-3 and 16-19.
  EXPECT_EQ(split.LayersOfStage(0), (std::vector<int64_t>{0, 1, 2, 3, 16, 17, 18, 19}));
  EXPECT_EQ(split.StageOfLayer(16), 0);
  EXPECT_EQ(split.StageOfLayer(4), 1);
}

// One check of the schedule against the stages, in the split every command makes: dualpipe on an odd
// pp was refused only where the microbatches were checked (memory, cost), and plan and check took it.
TEST(SplitLayers, DualPipeNeedsAnEvenStageCountWithoutMicrobatches) {
  const StatusOr<PipelineSplit> odd = SplitLayers(30, 3, 1, PipelineSchedule::kDualPipe, {});
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.status().diag().message,
            "--pp-schedule dualpipe runs two directions over an even stage count; pp=3 is odd");
  EXPECT_EQ(odd.status().diag().message, CheckSchedule(3, 1, PipelineSchedule::kDualPipe).diag().message);
  EXPECT_TRUE(SplitLayers(32, 4, 1, PipelineSchedule::kDualPipe, {}).ok());
}

// pp x --virtual-stages beyond the layers: the hint named "at most pp=1 stages" (64 virtual stages of a
// 32-layer model), which no pipeline is; it names the product and what fits with each given.
TEST(SplitLayers, VirtualStagesPastTheLayersNameTheProduct) {
  const StatusOr<PipelineSplit> split = SplitLayers(32, 2, 64, PipelineSchedule::kInterleaved, {});
  ASSERT_FALSE(split.ok());
  const Status status = split.status();
  const Diag& diag = status.diag();
  EXPECT_EQ(diag.message,
            "the pipeline has 128 model chunks (pp=2 x --virtual-stages 64) and the model 32 layers: a chunk would "
            "hold none");
  EXPECT_EQ(diag.notes,
            (std::vector<std::string>{
                "each model chunk holds at least one layer, so pp x --virtual-stages may be at most the 32 "
                "layers",
                "with pp=2: --virtual-stages 16 or fewer",
                "--virtual-stages 64 is more than any pipeline of 32 layers takes: at most 16 (with pp=2)"}));
  for (const std::string& note : diag.notes) EXPECT_EQ(note.find("pp=1 "), std::string::npos) << note;
  const StatusOr<PipelineSplit> stages = SplitLayers(32, 4, 16, PipelineSchedule::kGpipe, {});
  ASSERT_FALSE(stages.ok());
  EXPECT_EQ(stages.status().diag().notes.at(2), "with --virtual-stages 16: pp=2 or fewer");
}

TEST(SplitLayers, OneCountPerStageIsDealtToItsChunks) {
  StatusOr<PipelineSplit> split = SplitLayers(17, 2, 2, PipelineSchedule::kInterleaved, {9, 8});
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  // Stage 0's 9 layers: chunks 0 and 2 take 5 and 4; stage 1's 8: chunks 1 and 3 take 4 each.
  EXPECT_EQ(split->chunk_layers, (std::vector<int64_t>{5, 4, 4, 4}));
  EXPECT_EQ(split->LayerCount(0), 9);
}

TEST(SplitLayers, OnlyTheFirstAndLastChunksMayBeEmpty) {
  // Llama 3 405B: 126 layers over 16 stages x 8 chunks, the first chunk the embedding alone and the last
  // the head and the loss alone.
  std::vector<int64_t> per_stage(16, 8);
  per_stage.front() = 7;
  per_stage.back() = 7;
  StatusOr<PipelineSplit> split = SplitLayers(126, 16, 8, PipelineSchedule::kInterleaved, per_stage);
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  EXPECT_EQ(split->chunk_layers.front(), 0);
  EXPECT_EQ(split->chunk_layers.back(), 0);
  EXPECT_EQ(split->chunk_layers[1], 1);
  EXPECT_EQ(split->LayerCount(0), 7);
  EXPECT_FALSE(SplitLayers(8, 4, 1, PipelineSchedule::k1F1B, {2, 0, 3, 3}).ok());
  EXPECT_TRUE(SplitLayers(8, 4, 1, PipelineSchedule::k1F1B, {0, 3, 3, 2}).ok());
}

TEST(ParseLayerCounts, TakesPlainDecimalsOnly) {
  EXPECT_EQ(*ParseLayerCounts("9,8,8,7"), (std::vector<int64_t>{9, 8, 8, 7}));
  EXPECT_TRUE(ParseLayerCounts("")->empty());
  for (const char* bad : {"9,,7", "-1,3", "0x10", "8, 8", "99999999999999999999"}) {
    EXPECT_FALSE(ParseLayerCounts(bad).ok()) << bad;
  }
}

TEST(CheckMicrobatches, OneF1BNeedsAMicrobatchPerStage) {
  const PipelineSplit split = Split(32, 4);
  EXPECT_TRUE(CheckMicrobatches(split, 4).ok());
  const Status few = CheckMicrobatches(split, 3);
  ASSERT_FALSE(few.ok());
  EXPECT_NE(few.diag().message.find("fewer than the 4 pipeline stages"), std::string::npos);
}

TEST(CheckMicrobatches, GpipeRunsAnyCount) {
  EXPECT_TRUE(CheckMicrobatches(Split(32, 4, PipelineSchedule::kGpipe), 1).ok());
}

TEST(CheckMicrobatches, InterleavedNeedsAMultipleOfTheStages) {
  const PipelineSplit split = Split(32, 4, PipelineSchedule::kInterleaved, 2);
  EXPECT_TRUE(CheckMicrobatches(split, 8).ok());
  const Status odd = CheckMicrobatches(split, 6);
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.diag().notes.at(0).find("4 or 8"), std::string::npos) << odd.diag().notes.at(0);
}

TEST(CheckMicrobatches, DualPipeNeedsAnEvenStageCountAndAnEvenCount) {
  EXPECT_TRUE(CheckMicrobatches(Split(32, 4, PipelineSchedule::kDualPipe), 8).ok());
  EXPECT_FALSE(CheckMicrobatches(Split(32, 4, PipelineSchedule::kDualPipe), 5).ok());
  // DualPipe.step() asserts num_chunks >= num_ranks * 2: an even count between p and 2p does not run.
  const Status few = CheckMicrobatches(Split(32, 4, PipelineSchedule::kDualPipe), 6);
  ASSERT_FALSE(few.ok());
  EXPECT_NE(few.diag().message.find("at least twice the 4 stages"), std::string::npos) << few.diag().message;
  EXPECT_EQ(few.diag().notes.at(0), "use --microbatches 8");
}

TEST(InFlightMicrobatches, OneF1BStageKeepsPMinusI) {
  const PipelineSplit split = Split(32, 4);
  EXPECT_EQ(InFlightMicrobatches(split, 0, 16), 4);
  EXPECT_EQ(InFlightMicrobatches(split, 3, 16), 1);
  EXPECT_EQ(InFlightMicrobatches(split, 0, 2), 2);  // never more than the step has
}

TEST(InFlightMicrobatches, GpipeKeepsEveryMicrobatchSoItExceedsOneF1BPastPStages) {
  const PipelineSplit gpipe = Split(32, 4, PipelineSchedule::kGpipe);
  const PipelineSplit one = Split(32, 4);
  for (int64_t m : {5, 8, 32}) {
    EXPECT_GT(InFlightMicrobatches(gpipe, 0, m), InFlightMicrobatches(one, 0, m)) << m;
  }
}

TEST(InFlightMicrobatches, InterleavedFirstStageMatchesKorthikanti) {
  // 1 + (p - 1) / (p V) times 1F1B's p microbatches (Korthikanti et al. 2022, 4.2.3).
  const PipelineSplit split = Split(64, 4, PipelineSchedule::kInterleaved, 2);
  EXPECT_DOUBLE_EQ(InFlightMicrobatches(split, 0, 64), 4.0 * (1 + 3.0 / 8.0));
}

TEST(InFlightMicrobatches, DualPipeKeepsPPlusOne) {
  EXPECT_EQ(InFlightMicrobatches(Split(32, 4, PipelineSchedule::kDualPipe), 2, 16), 5);
}

}  // namespace
}  // namespace easyplan::planner
