// EasyDeL's OperationMetadata.get_shardings (easydel/operations/_operation_meta.py) as unit tests: the
// runtime modes and layouts, and every AttnShardingRules field in every mode, layout and mni setting,
// for the default PartitionAxis and customised ones (C1, C2).
#include "planner/runtime_modes.h"

#include <gtest/gtest.h>

#include "planner/activations_test_util.h"

namespace easyplan::planner {
namespace {

using activations_testing::ActivationsTest;
using activations_testing::B;
using activations_testing::DP;
using activations_testing::Entry;
using activations_testing::FSDP;
using activations_testing::kAllModes;
using activations_testing::kC1;
using activations_testing::kC2;
using activations_testing::N;
using activations_testing::SP;
using activations_testing::TP;
using plan_testing::FiveAxisMesh;
using plan_testing::P;

// ---- modes and layouts -------------------------------------------------------------------------------

TEST(RuntimeModeTest, NamesConstantsAndGenerationModes) {
  EXPECT_EQ(ParseMode("decode"), Mode::kDecode);
  EXPECT_EQ(ParseMode("__autoregressive__"), Mode::kDecode);
  EXPECT_EQ(ParseMode("__prefill__"), Mode::kPrefill);
  EXPECT_EQ(ParseMode("generate"), std::nullopt);
  EXPECT_FALSE(IsGenerationMode(Mode::kTrain));
  EXPECT_FALSE(IsGenerationMode(Mode::kPrefill));  // prefill resolves like train
  EXPECT_TRUE(IsGenerationMode(Mode::kDecode));
  EXPECT_TRUE(IsGenerationMode(Mode::kInsert));  // insert resolves like decode
  EXPECT_EQ(ModeConstant(Mode::kInsert), "__insert__");
}

TEST(AttnLayoutTest, ThdIsRejectedAsEasyDeLRejectsIt) {
  EXPECT_EQ(*ParseAttnLayout("bthd"), AttnLayout::kBthd);
  EXPECT_EQ(*ParseAttnLayout("bhtd"), AttnLayout::kBhtd);
  auto thd = ParseAttnLayout("thd");
  ASSERT_FALSE(thd.ok());
  EXPECT_EQ(thd.status().diag().message,
            "--layout thd is not implemented by EasyDeL: OperationMetadata.get_shardings raises "
            "NotImplementedError(\"Layout 'thd' is not implemented\")");
  auto other = ParseAttnLayout("tbhd");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().diag().message, "--layout 'tbhd' is not an attention layout");
}

// ---- The default PartitionAxis, identical in all four modes ------------------------------------------

TEST_F(ActivationsTest, Section22DefaultsInEveryModeLayoutAndMni) {
  const Json config = Config();
  for (Mode mode : kAllModes) {
    for (bool mni : {false, true}) {
      SCOPED_TRACE(std::string(ModeName(mode)) + (mni ? " mni" : ""));
      const AttnShardingRules bthd = Rules(config, mode, AttnLayout::kBthd, mni);
      EXPECT_EQ(bthd.query3d, P({B, TP, N}));
      EXPECT_EQ(bthd.query, P({B, SP, TP, N}));
      EXPECT_EQ(bthd.output, bthd.query);
      EXPECT_EQ(bthd.key, P({B, SP, TP, N}));
      EXPECT_EQ(bthd.value, bthd.key);
      EXPECT_EQ(bthd.bias, P({B, N, SP, N}));
      EXPECT_EQ(bthd.mask, P({B, N, SP, N}));
      EXPECT_EQ(bthd.q_segment_ids, P({B, SP}));
      EXPECT_EQ(bthd.kv_segment_ids, P({B, SP}));
      EXPECT_EQ(bthd.softmax_aux, std::nullopt);

      const AttnShardingRules bhtd = Rules(config, mode, AttnLayout::kBhtd, mni);
      EXPECT_EQ(bhtd.query3d, P({B, TP, N}));  // layout-independent
      EXPECT_EQ(bhtd.query, P({B, TP, SP, N}));
      EXPECT_EQ(bhtd.output, bhtd.query);
      EXPECT_EQ(bhtd.key, P({B, TP, SP, N}));
      EXPECT_EQ(bhtd.value, bhtd.key);
      EXPECT_EQ(bhtd.bias, P({B, N, SP, N}));
      EXPECT_EQ(bhtd.mask, P({B, N, SP, N}));
      EXPECT_EQ(bhtd.q_segment_ids, P({B, SP}));
      EXPECT_EQ(bhtd.kv_segment_ids, P({B, SP}));

      for (AttnLayout layout : {AttnLayout::kBthd, AttnLayout::kBhtd}) {
        EXPECT_EQ(Rules(config, mode, layout, mni, 2).softmax_aux, P({N, TP}));
        EXPECT_EQ(Rules(config, mode, layout, mni, 1).softmax_aux, P({TP}));
        EXPECT_EQ(Rules(config, mode, layout, mni, 3).softmax_aux, P({TP}));  // any rank but 2: [HEAD]
      }
    }
  }
}

TEST_F(ActivationsTest, AttnFieldsListsTheTenFieldsInOrder) {
  const AttnShardingRules rules = Rules(Config(), Mode::kTrain, AttnLayout::kBthd, false, 2);
  std::vector<std::string> names;
  for (const auto& [name, spec] : AttnFields(rules)) {
    names.push_back(name);
    EXPECT_NE(spec, nullptr);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"query3d", "query", "key", "value", "bias", "mask", "output",
                                             "q_segment_ids", "kv_segment_ids", "softmax_aux"}));
}

// ---- C1: decode_batch_axis="dp", decode_head_axis=None -----------------------------------------------

TEST_F(ActivationsTest, Section23C1TrainAndPrefillAreTheDefaults) {
  const Json config = Config(kC1);
  for (Mode mode : {Mode::kTrain, Mode::kPrefill}) {
    for (AttnLayout layout : {AttnLayout::kBthd, AttnLayout::kBhtd}) {
      const AttnShardingRules c1 = Rules(config, mode, layout);
      const AttnShardingRules defaults = Rules(Config(), mode, layout);
      for (size_t i = 0; i < AttnFields(c1).size() - 1; ++i) {
        EXPECT_EQ(*AttnFields(c1)[i].second, *AttnFields(defaults)[i].second) << AttnFields(c1)[i].first;
      }
    }
  }
}

TEST_F(ActivationsTest, Section23C1DecodeAndInsertUseDpForBatchAndKeepTp) {
  const Json config = Config(kC1);
  for (Mode mode : {Mode::kDecode, Mode::kInsert}) {
    for (bool mni : {false, true}) {
      SCOPED_TRACE(std::string(ModeName(mode)) + (mni ? " mni" : ""));
      const AttnShardingRules bthd = Rules(config, mode, AttnLayout::kBthd, mni);
      EXPECT_EQ(bthd.query3d, P({DP, TP, N}));
      EXPECT_EQ(bthd.query, P({DP, SP, TP, N}));
      EXPECT_EQ(bthd.output, P({DP, SP, TP, N}));
      EXPECT_EQ(bthd.key, P({DP, SP, TP, N}));
      EXPECT_EQ(bthd.value, P({DP, SP, TP, N}));
      EXPECT_EQ(bthd.bias, P({DP, N, SP, N}));
      EXPECT_EQ(bthd.mask, P({DP, N, SP, N}));
      EXPECT_EQ(bthd.q_segment_ids, P({DP, SP}));
      EXPECT_EQ(bthd.kv_segment_ids, P({DP, SP}));
      const AttnShardingRules bhtd = Rules(config, mode, AttnLayout::kBhtd, mni);
      EXPECT_EQ(bhtd.query3d, P({DP, TP, N}));
      EXPECT_EQ(bhtd.query, P({DP, TP, SP, N}));
      EXPECT_EQ(bhtd.output, P({DP, TP, SP, N}));
      EXPECT_EQ(bhtd.key, P({DP, TP, SP, N}));
      EXPECT_EQ(bhtd.value, P({DP, TP, SP, N}));
      EXPECT_EQ(bhtd.bias, P({DP, N, SP, N}));
      EXPECT_EQ(bhtd.mask, P({DP, N, SP, N}));
      EXPECT_EQ(bhtd.q_segment_ids, P({DP, SP}));
      EXPECT_EQ(bhtd.kv_segment_ids, P({DP, SP}));
    }
  }
}

// ---- C2: kv_head_axis=None, bias_head_sequence_axis="tp", decode batch dp, decode key seq fsdp --------

TEST_F(ActivationsTest, Section23C2EveryRowModeAndLayout) {
  const Json config = Config(kC2);
  for (Mode mode : kAllModes) {
    SCOPED_TRACE(ModeName(mode));
    const bool decode = IsGenerationMode(mode);
    const Entry batch = decode ? DP : B;
    const Entry kv_seq = decode ? FSDP : SP;
    const AttnShardingRules bthd = Rules(config, mode);
    EXPECT_EQ(bthd.query, P({batch, SP, TP, N}));
    EXPECT_EQ(bthd.output, bthd.query);
    EXPECT_EQ(bthd.key, P({batch, kv_seq, N, N}));
    EXPECT_EQ(bthd.value, P({batch, kv_seq, N, N}));
    EXPECT_EQ(bthd.bias, P({batch, TP, SP, N}));
    EXPECT_EQ(bthd.mask, P({batch, N, SP, N}));
    EXPECT_EQ(bthd.q_segment_ids, P({batch, SP}));
    EXPECT_EQ(bthd.kv_segment_ids, P({batch, kv_seq}));
    EXPECT_EQ(Rules(config, mode, AttnLayout::kBthd, false, 2).softmax_aux, P({N, N}));  // a real spec, not None
    EXPECT_EQ(Rules(config, mode, AttnLayout::kBthd, false, 1).softmax_aux, P({TP}));
    const AttnShardingRules mni = Rules(config, mode, AttnLayout::kBthd, true);
    EXPECT_EQ(mni.key, P({batch, kv_seq, TP, N}));
    EXPECT_EQ(mni.value, P({batch, kv_seq, TP, N}));
    EXPECT_EQ(Rules(config, mode, AttnLayout::kBthd, true, 2).softmax_aux, P({N, N}));  // KV_HEAD even under mni
    // bhtd swaps entries 1 and 2 of query, key and value; the rest is layout-independent.
    const AttnShardingRules bhtd = Rules(config, mode, AttnLayout::kBhtd);
    EXPECT_EQ(bhtd.query, P({batch, TP, SP, N}));
    EXPECT_EQ(bhtd.output, bhtd.query);
    EXPECT_EQ(bhtd.key, P({batch, N, kv_seq, N}));
    EXPECT_EQ(bhtd.value, P({batch, N, kv_seq, N}));
    EXPECT_EQ(bhtd.bias, bthd.bias);
    EXPECT_EQ(bhtd.mask, bthd.mask);
    EXPECT_EQ(bhtd.kv_segment_ids, bthd.kv_segment_ids);
    const AttnShardingRules bhtd_mni = Rules(config, mode, AttnLayout::kBhtd, true);
    EXPECT_EQ(bhtd_mni.key, P({batch, TP, kv_seq, N}));
  }
}

// ---- None falls back, an empty value replicates (eformer PartitionAxis.resolve_axis) ------------------

TEST_F(ActivationsTest, DecodeNullFallsBackToTrainButAnEmptyListReplicates) {
  const Json fallback = Config({"partition_axis.decode_head_axis=null"});
  EXPECT_EQ(Rules(fallback, Mode::kDecode).query, P({B, SP, TP, N}));  // a no-op
  const Json empty = Config({"partition_axis.decode_head_axis=[]"});
  EXPECT_EQ(Rules(empty, Mode::kDecode).query, P({B, SP, N, N}));
  EXPECT_EQ(Rules(empty, Mode::kInsert).query, P({B, SP, N, N}));
  EXPECT_EQ(Rules(empty, Mode::kTrain).query, P({B, SP, TP, N}));
  const Json blank = Config({"partition_axis.decode_head_axis=\"\""});
  EXPECT_EQ(Rules(blank, Mode::kDecode).query, P({B, SP, N, N}));  // "" is falsy: None
}

TEST_F(ActivationsTest, ATrainFieldSetToNullIsUnshardedInEveryMode) {
  const Json config = Config({"partition_axis.kv_head_axis=null"});
  for (Mode mode : kAllModes) EXPECT_EQ(Rules(config, mode).key, P({B, SP, N, N}));
}

TEST_F(ActivationsTest, DecodeQuerySequenceAndAttentionDimsFallBackUntilSet) {
  const Json config = Config({"partition_axis.decode_query_sequence_axis=dp", "partition_axis.attention_dim_axis=ep"});
  EXPECT_EQ(Rules(config, Mode::kTrain).query, P({B, SP, TP, {"ep"}}));
  EXPECT_EQ(Rules(config, Mode::kDecode).query, P({B, DP, TP, {"ep"}}));  // decode_attention_dim_axis: None
}

TEST_F(ActivationsTest, RenamedMeshAxesFollowThrough) {
  const Json config = Config({"partition_axis.data_parallel_axis=data", "partition_axis.tensor_parallel_axis=model",
                              "partition_axis.sequence_parallel_axis=seq"});
  const AttnShardingRules rules = Rules(config, Mode::kDecode);
  EXPECT_EQ(rules.query, P({{"fsdp", "data"}, {"seq"}, {"model"}, N}));
}

TEST_F(ActivationsTest, Section24VanillaDecodeExampleUnderC1) {
  // C1 on dp2,fsdp2,ep1,tp2,sp2: decode query (8, 1, 32, 128) and cache KV (8, 4096, 8, 128).
  const Mesh mesh = FiveAxisMesh(2, 2, 1, 2, 2);
  const AttnShardingRules rules = Rules(Config(kC1), Mode::kDecode);
  EXPECT_EQ(CorrectSpec(Shape{8, 1, 32, 128}, rules.query, mesh, UnevenMode::kReplicate).spec, P({DP, N, TP, N}));
  EXPECT_EQ(CorrectSpec(Shape{8, 4096, 8, 128}, rules.key, mesh, UnevenMode::kReplicate).spec, P({DP, SP, TP, N}));
}

}  // namespace
}  // namespace easyplan::planner
