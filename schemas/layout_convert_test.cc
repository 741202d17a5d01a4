// EasyDeL's StateDictConverter rules (easydel/utils/parameters_transformation.py), one tensor at a time.
#include "schemas/layout_convert.h"

#include <gtest/gtest.h>

#include <vector>

namespace easyplan::schemas {
namespace {

NamedShape ToEasyDel(std::string_view name, Shape shape, TensorKind kind = TensorKind::kAuto, int64_t experts = 0) {
  return HfToEasyDel(name, shape, kind, experts);
}

TEST(LayoutConvertTest, EmbeddingKeepsOrientationAndBecomesEmbedding) {
  EXPECT_EQ(ToEasyDel("model.embed_tokens.weight", Shape{128256, 4096}, TensorKind::kEmbedding),
            (NamedShape{"model/embed_tokens/embedding", Shape{128256, 4096}}));
}

TEST(LayoutConvertTest, LayerNormWeightBecomesScaleUnchanged) {
  EXPECT_EQ(ToEasyDel("h.0.ln_1.weight", Shape{768}, TensorKind::kLayerNorm),
            (NamedShape{"h/0/ln_1/scale", Shape{768}}));
}

TEST(LayoutConvertTest, RankOneWeightBecomesKernelUnchanged) {
  // RMSNorm weights are plain `.weight`s of rank 1: EasyDeL names them kernel, no permutation.
  EXPECT_EQ(ToEasyDel("model.layers.0.input_layernorm.weight", Shape{4096}),
            (NamedShape{"model/layers/0/input_layernorm/kernel", Shape{4096}}));
}

TEST(LayoutConvertTest, LinearWeightIsTransposedToInOut) {
  EXPECT_EQ(ToEasyDel("model.layers.0.mlp.down_proj.weight", Shape{4096, 14336}),
            (NamedShape{"model/layers/0/mlp/down_proj/kernel", Shape{14336, 4096}}));
}

TEST(LayoutConvertTest, HigherRankWeightsFollowTheConverterPermutations) {
  // result[k] = hf[perm[k]] with the converter's perms: 3 (2,1,0); 4 (2,3,1,0); 5 (2,3,4,1,0); 6 (4,5,3,2,1,0).
  EXPECT_EQ(ToEasyDel("conv.weight", Shape{1, 2, 3}).shape, (Shape{3, 2, 1}));
  EXPECT_EQ(ToEasyDel("conv.weight", Shape{1, 2, 3, 4}).shape, (Shape{3, 4, 2, 1}));
  EXPECT_EQ(ToEasyDel("conv.weight", Shape{1, 2, 3, 4, 5}).shape, (Shape{3, 4, 5, 2, 1}));
  EXPECT_EQ(ToEasyDel("conv.weight", Shape{1, 2, 3, 4, 5, 6}).shape, (Shape{5, 6, 4, 3, 2, 1}));
}

TEST(LayoutConvertTest, RankSevenWeightIsOnlyRenamed) {
  Shape seven{1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(ToEasyDel("x.weight", seven), (NamedShape{"x/kernel", seven}));
  EXPECT_EQ(EasyDelToHf("x/kernel", seven, 0), (std::vector<NamedShape>{{"x.weight", seven}}));
}

TEST(LayoutConvertTest, BackwardPermutationsAreExactInversesForRanksTwoToSix) {
  for (int rank = 2; rank <= 6; ++rank) {
    std::vector<int64_t> dims;
    for (int d = 0; d < rank; ++d) dims.push_back(10 + d);  // distinct, so any misplacement shows
    Shape hf(dims);
    NamedShape easydel = ToEasyDel("m.w.weight", hf);
    EXPECT_NE(easydel.shape, hf) << "rank " << rank;
    EXPECT_EQ(EasyDelToHf(easydel.name, easydel.shape, 0), (std::vector<NamedShape>{{"m.w.weight", hf}}))
        << "rank " << rank;
    // And the other way round: backward then forward is the identity too.
    std::vector<NamedShape> back = EasyDelToHf("m/w/kernel", hf, 0);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(ToEasyDel(back[0].name, back[0].shape), (NamedShape{"m/w/kernel", hf})) << "rank " << rank;
  }
}

TEST(LayoutConvertTest, StackedExpertKernelsAreEInOut) {
  NamedShape w1 =
      ToEasyDel("model.layers.3.block_sparse_moe.experts.{expert}.w1.weight", Shape{14336, 4096}, TensorKind::kAuto, 8);
  EXPECT_EQ(w1, (NamedShape{"model/layers/3/block_sparse_moe/experts/w1/kernel", Shape{8, 4096, 14336}}));
  NamedShape w2 =
      ToEasyDel("model.layers.3.block_sparse_moe.experts.{expert}.w2.weight", Shape{4096, 14336}, TensorKind::kAuto, 8);
  EXPECT_EQ(w2, (NamedShape{"model/layers/3/block_sparse_moe/experts/w2/kernel", Shape{8, 14336, 4096}}));
}

TEST(LayoutConvertTest, StackedExpertBiasIsStackedButNotPermuted) {
  EXPECT_EQ(ToEasyDel("mlp.experts.{expert}.up_proj.bias", Shape{512}, TensorKind::kAuto, 4),
            (NamedShape{"mlp/experts/up_proj/bias", Shape{4, 512}}));
}

TEST(LayoutConvertTest, BiasesAndOtherNamesAreUnchanged) {
  EXPECT_EQ(ToEasyDel("model.layers.0.self_attn.q_proj.bias", Shape{4096}),
            (NamedShape{"model/layers/0/self_attn/q_proj/bias", Shape{4096}}));
  EXPECT_EQ(ToEasyDel("model.layers.3.mlp.gate.e_score_correction_bias", Shape{256}),
            (NamedShape{"model/layers/3/mlp/gate/e_score_correction_bias", Shape{256}}));
  EXPECT_EQ(ToEasyDel("head.probe", Shape{1, 1, 1152}), (NamedShape{"head/probe", Shape{1, 1, 1152}}));
  EXPECT_EQ(ToEasyDel("h.0.attn.masked_bias", Shape{}), (NamedShape{"h/0/attn/masked_bias", Shape{}}));
  // The kind only matters for `.weight`s.
  EXPECT_EQ(ToEasyDel("ln.bias", Shape{8}, TensorKind::kLayerNorm), (NamedShape{"ln/bias", Shape{8}}));
}

TEST(LayoutConvertTest, DotsBecomeSlashes) {
  EXPECT_EQ(ToEasyDel("a.b.c.d", Shape{2}).name, "a/b/c/d");
  EXPECT_EQ(ToEasyDel("lm_head.weight", Shape{32000, 4096}), (NamedShape{"lm_head/kernel", Shape{4096, 32000}}));
}

TEST(LayoutConvertTest, EasyDelToHfRenamesEveryParameterKindBack) {
  EXPECT_EQ(EasyDelToHf("model/embed_tokens/embedding", Shape{10, 4}, 0),
            (std::vector<NamedShape>{{"model.embed_tokens.weight", Shape{10, 4}}}));
  EXPECT_EQ(EasyDelToHf("h/0/ln_1/scale", Shape{4}, 0), (std::vector<NamedShape>{{"h.0.ln_1.weight", Shape{4}}}));
  EXPECT_EQ(EasyDelToHf("model/norm/kernel", Shape{4}, 0), (std::vector<NamedShape>{{"model.norm.weight", Shape{4}}}));
  EXPECT_EQ(EasyDelToHf("q_proj/bias", Shape{4}, 0), (std::vector<NamedShape>{{"q_proj.bias", Shape{4}}}));
}

TEST(LayoutConvertTest, EasyDelToHfUnstacksExpertsInOrder) {
  std::vector<NamedShape> hf = EasyDelToHf("model/layers/1/mlp/experts/down_proj/kernel", Shape{3, 768, 2048}, 3);
  EXPECT_EQ(hf, (std::vector<NamedShape>{
                    {"model.layers.1.mlp.experts.0.down_proj.weight", Shape{2048, 768}},
                    {"model.layers.1.mlp.experts.1.down_proj.weight", Shape{2048, 768}},
                    {"model.layers.1.mlp.experts.2.down_proj.weight", Shape{2048, 768}},
                }));
}

TEST(LayoutConvertTest, EasyDelToHfUnstacksAtTheLastExpertsComponent) {
  // A path with "experts" twice: the expert index goes after the innermost one.
  std::vector<NamedShape> hf = EasyDelToHf("experts/blocks/experts/w1/kernel", Shape{2, 4, 8}, 2);
  ASSERT_EQ(hf.size(), 2u);
  EXPECT_EQ(hf[0], (NamedShape{"experts.blocks.experts.0.w1.weight", Shape{8, 4}}));
  EXPECT_EQ(hf[1], (NamedShape{"experts.blocks.experts.1.w1.weight", Shape{8, 4}}));
}

// One tensor of the round-trip list: an HF tensor as a template writes it.
struct Sample {
  std::string hf_name;
  Shape hf_shape;
  TensorKind kind = TensorKind::kAuto;
  int64_t experts = 0;
};

std::vector<NamedShape> PerExpert(const Sample& sample) {
  if (sample.experts == 0) return {{sample.hf_name, sample.hf_shape}};
  std::vector<NamedShape> out;
  for (int64_t e = 0; e < sample.experts; ++e) {
    std::string name = sample.hf_name;
    name.replace(name.find(kExpertPlaceholder), kExpertPlaceholder.size(), std::to_string(e));
    out.push_back({name, sample.hf_shape});
  }
  return out;
}

TEST(LayoutConvertTest, RoundTripReproducesTheHfTensors) {
  const std::vector<Sample> samples = {
      {"model.embed_tokens.weight", Shape{32000, 4096}, TensorKind::kEmbedding},
      {"transformer.wpe.weight", Shape{1024, 768}, TensorKind::kEmbedding},
      {"h.0.ln_1.weight", Shape{768}, TensorKind::kLayerNorm},
      {"h.0.ln_1.bias", Shape{768}},
      {"model.layers.0.input_layernorm.weight", Shape{4096}},
      {"model.layers.0.self_attn.q_proj.weight", Shape{4096, 4096}},
      {"model.layers.0.self_attn.k_proj.weight", Shape{1024, 4096}},
      {"model.layers.0.self_attn.q_proj.bias", Shape{4096}},
      {"model.layers.0.mlp.down_proj.weight", Shape{4096, 14336}},
      {"lm_head.weight", Shape{128256, 4096}},
      {"embeddings.patch_embedding.weight", Shape{1152, 3, 14, 14}},
      {"conv1d.weight", Shape{64, 32, 3}},
      {"conv3d.weight", Shape{64, 32, 3, 5, 7}},
      {"conv4d.weight", Shape{64, 32, 2, 3, 5, 7}},
      {"model.layers.3.mlp.gate.e_score_correction_bias", Shape{256}},
      {"h.0.attn.masked_bias", Shape{}},
      {"model.layers.3.block_sparse_moe.experts.{expert}.w1.weight", Shape{14336, 4096}, TensorKind::kAuto, 8},
      {"model.layers.3.mlp.experts.{expert}.down_proj.weight", Shape{2048, 7168}, TensorKind::kAuto, 4},
      {"model.layers.3.mlp.experts.{expert}.up_proj.bias", Shape{2048}, TensorKind::kAuto, 2},
  };
  for (const Sample& sample : samples) {
    NamedShape easydel = HfToEasyDel(sample.hf_name, sample.hf_shape, sample.kind, sample.experts);
    EXPECT_EQ(easydel.name.find('.'), std::string::npos) << easydel.name;
    EXPECT_EQ(EasyDelToHf(easydel.name, easydel.shape, sample.experts), PerExpert(sample)) << sample.hf_name;
  }
}

}  // namespace
}  // namespace easyplan::schemas

namespace easyplan::schemas {
namespace {

TEST(HfDimsInEasyDelTest, AgreesWithTheConverterOnDistinctDims) {
  // Distinct sizes make every dim identifiable: HF dim k must land where its size lands.
  for (int rank = 1; rank <= 6; ++rank) {
    std::vector<int64_t> dims;
    for (int k = 0; k < rank; ++k) dims.push_back(10 + k);
    const Shape hf{std::vector<int64_t>(dims)};
    const NamedShape ed = HfToEasyDel("model.x.weight", hf, TensorKind::kAuto, 0);
    const std::vector<int> map = HfDimsInEasyDel(rank, true, false);
    for (int k = 0; k < rank; ++k) EXPECT_EQ(ed.shape[map[static_cast<size_t>(k)]], hf[k]) << "rank " << rank;
  }
  const NamedShape stacked = HfToEasyDel("model.experts.{expert}.w1.weight", Shape{14336, 4096}, TensorKind::kAuto, 8);
  const std::vector<int> map = HfDimsInEasyDel(2, true, true);
  EXPECT_EQ(stacked.shape[map[0]], 14336);
  EXPECT_EQ(stacked.shape[map[1]], 4096);
  EXPECT_EQ(stacked.shape[0], 8);
}

TEST(HfDimsInEasyDelTest, NonKernelsKeepTheirDims) {
  EXPECT_EQ(HfDimsInEasyDel(2, false, false), (std::vector<int>{0, 1}));
  EXPECT_EQ(HfDimsInEasyDel(1, true, false), (std::vector<int>{0}));
}

}  // namespace
}  // namespace easyplan::schemas
