// Template expansion against small in-memory templates, then the real templates over the project's
// examples (tensor counts and parameter totals pinned against the released checkpoints).
#include "schemas/tree_builder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/document.h"
#include "core/json_parse.h"
#include "schemas/layout_convert.h"
#include "schemas/resolver.h"
#include "schemas/schema_set.h"
#include "tests/test_util.h"

namespace easyplan::schemas {
namespace {

TreeTemplate MustParse(const std::string& yaml, const std::string& blocks = "") {
  auto tree = ParseTreeTemplate(yaml, "t.yaml", blocks, "_blocks.yaml");
  EXPECT_TRUE(tree.ok()) << tree.status().ToString();
  return tree.ok() ? *tree : TreeTemplate{};
}

TreeOptions Options(Layout layout) {
  TreeOptions options;
  options.layout = layout;
  return options;
}

ParamTree MustBuild(const TreeTemplate& tree, const Json& config, const TreeOptions& options) {
  auto built = BuildParamTree(tree, config, options);
  EXPECT_TRUE(built.ok()) << built.status().ToString();
  return built.ok() ? *built : ParamTree{};
}

ParamTree MustBuild(const TreeTemplate& tree, const Json& config, Layout layout) {
  return MustBuild(tree, config, Options(layout));
}

std::vector<std::string> Names(const ParamTree& tree) {
  std::vector<std::string> names;
  for (const TensorEntry& tensor : tree.tensors) names.push_back(tensor.name);
  return names;
}

const TensorEntry* Find(const ParamTree& tree, const std::string& name) {
  for (const TensorEntry& tensor : tree.tensors) {
    if (tensor.name == name) return &tensor;
  }
  return nullptr;
}

// The error of building `yaml` over `config`, or "no error".
Diag BuildError(const std::string& yaml, const Json& config, TreeOptions options = {}) {
  TreeTemplate tree = MustParse(yaml);
  auto built = BuildParamTree(tree, config, options);
  if (built.ok()) return Diag{Severity::kNote, {}, "no error", {}};
  return built.status().diag();
}

using Names_ = std::vector<std::string>;

TEST(TreeBuilderTest, LoopsAndPrefixesNameEveryTensor) {
  TreeTemplate tree = MustParse(R"yaml(model_type: toy
tensors:
  - {name: embed.weight, shape: [vocab_size, hidden_size], kind: embedding}
  - for: i
    count: num_hidden_layers
    prefix: "model.layers.{i}."
    tensors:
      - for: j
        count: 2
        prefix: "sub.{i * 10 + j}."
        tensors:
          - {name: w.weight, shape: [hidden_size, 2 * hidden_size]}
      - {name: n.bias, shape: [hidden_size]}
)yaml");
  Json config = {{"vocab_size", 10}, {"hidden_size", 4}, {"num_hidden_layers", 2}};
  ParamTree hf = MustBuild(tree, config, Layout::kHf);
  EXPECT_EQ(hf.model_type, "toy");
  EXPECT_EQ(hf.layout, Layout::kHf);
  EXPECT_EQ(Names(hf), (Names_{"embed.weight", "model.layers.0.sub.0.w.weight", "model.layers.0.sub.1.w.weight",
                               "model.layers.0.n.bias", "model.layers.1.sub.10.w.weight",
                               "model.layers.1.sub.11.w.weight", "model.layers.1.n.bias"}));
  EXPECT_EQ(hf.tensors[1].shape, (Shape{4, 8}));
  ParamTree easydel = MustBuild(tree, config, Layout::kEasyDel);
  EXPECT_EQ(easydel.layout, Layout::kEasyDel);
  EXPECT_EQ(Names(easydel), (Names_{"embed/embedding", "model/layers/0/sub/0/w/kernel", "model/layers/0/sub/1/w/kernel",
                                    "model/layers/0/n/bias", "model/layers/1/sub/10/w/kernel",
                                    "model/layers/1/sub/11/w/kernel", "model/layers/1/n/bias"}));
  EXPECT_EQ(easydel.tensors[0].shape, (Shape{10, 4}));
  EXPECT_EQ(easydel.tensors[1].shape, (Shape{8, 4}));
}

TEST(TreeBuilderTest, ZeroCountLoopHasNoTensors) {
  TreeTemplate tree = MustParse(R"yaml(model_type: toy
tensors:
  - {for: i, count: 0, prefix: "l.{i}.", tensors: [{name: w, shape: [1]}]}
)yaml");
  EXPECT_TRUE(MustBuild(tree, Json::object(), Layout::kHf).tensors.empty());
}

TEST(TreeBuilderTest, EasyDelPrefixGoesBeforeTheGroupPrefixInEasyDelOnly) {
  TreeTemplate tree = MustParse(R"yaml(model_type: toy
tensors:
  - easydel_prefix: "transformer."
    tensors:
      - {name: wte.weight, shape: [10, 4], kind: embedding}
      - {for: i, count: 1, prefix: "h.{i}.", tensors: [{name: ln.bias, shape: [4]}]}
  - {prefix: "a.", easydel_prefix: "b.", tensors: [{name: x, shape: [1]}]}
  - {name: lm_head.weight, shape: [10, 4]}
)yaml");
  EXPECT_EQ(Names(MustBuild(tree, Json::object(), Layout::kHf)),
            (Names_{"wte.weight", "h.0.ln.bias", "a.x", "lm_head.weight"}));
  EXPECT_EQ(Names(MustBuild(tree, Json::object(), Layout::kEasyDel)),
            (Names_{"transformer/wte/embedding", "transformer/h/0/ln/bias", "b/a/x", "lm_head/kernel"}));
}

TEST(TreeBuilderTest, LoopVariableShadowsAConfigKeyAndIsRestored) {
  TreeTemplate tree = MustParse(R"yaml(model_type: toy
tensors:
  - {for: i, count: 2, prefix: "l.{i}.", tensors: [{name: w, shape: ["i + 1"]}]}
  - {name: "after.{i}", shape: [i]}
  - {for: k, count: 1, tensors: [{name: "k{k}", shape: [1]}]}
  - {name: "no_k", shape: [1], when: "k == null"}
)yaml");
  ParamTree hf = MustBuild(tree, Json{{"i", 7}}, Layout::kHf);
  EXPECT_EQ(Names(hf), (Names_{"l.0.w", "l.1.w", "after.7", "k0", "no_k"}));
  EXPECT_EQ(hf.tensors[1].shape, (Shape{2}));
  EXPECT_EQ(hf.tensors[2].shape, (Shape{7}));
}

TEST(TreeBuilderTest, LetBindsInOrderForTheBodyAndRestoresShadowedNames) {
  TreeTemplate tree = MustParse(R"yaml(model_type: toy
tensors:
  - {name: before, shape: [width]}
  - let: {width: "width * 2", extra: "width + 1"}
    tensors:
      - {name: inside, shape: [width, extra]}
  - {name: after, shape: [width]}
  - {name: extra_gone, shape: [1], when: "extra == null"}
)yaml");
  ParamTree hf = MustBuild(tree, Json{{"width", 3}}, Layout::kHf);
  ASSERT_EQ(Names(hf), (Names_{"before", "inside", "after", "extra_gone"}));
  EXPECT_EQ(hf.tensors[0].shape, (Shape{3}));
  EXPECT_EQ(hf.tensors[1].shape, (Shape{6, 7}));  // extra sees the new width: lets bind in order
  EXPECT_EQ(hf.tensors[2].shape, (Shape{3}));
}

TEST(TreeBuilderTest, LetParametrizesASharedBlock) {
  constexpr char kBlocks[] = R"yaml(blocks:
  mlp:
    - {name: up.weight, shape: [width, hidden_size]}
    - {name: up.bias, shape: [width], when: bias}
)yaml";
  auto tree = ParseTreeTemplate(R"yaml(model_type: toy
tensors:
  - {use: mlp, prefix: "dense.", let: {width: 8, bias: true}}
  - {use: mlp, prefix: "moe.", let: {width: "hidden_size // 2", bias: false}}
)yaml",
                                "t.yaml", kBlocks, "_blocks.yaml");
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  ParamTree hf = MustBuild(*tree, Json{{"hidden_size", 4}}, Layout::kHf);
  EXPECT_EQ(Names(hf), (Names_{"dense.up.weight", "dense.up.bias", "moe.up.weight"}));
  EXPECT_EQ(hf.tensors[0].shape, (Shape{8, 4}));
  EXPECT_EQ(hf.tensors[2].shape, (Shape{2, 4}));
}

TEST(TreeBuilderTest, ScopeEvaluatesTheBodyInTheSubConfig) {
  TreeTemplate tree = MustParse(R"yaml(model_type: toy
tensors:
  - scope: text_config
    prefix: "language_model."
    let: {double: "hidden_size * 2"}
    tensors:
      - {name: w, shape: [hidden_size, double]}
      - {name: outer_only, shape: [1], when: "vocab_size != null"}
  - {name: proj, shape: [text_config.hidden_size, hidden_size]}
)yaml");
  Json config = {{"hidden_size", 100}, {"vocab_size", 9}, {"text_config", {{"hidden_size", 4}}}};
  ParamTree hf = MustBuild(tree, config, Layout::kHf);
  ASSERT_EQ(Names(hf), (Names_{"language_model.w", "proj"}));
  EXPECT_EQ(hf.tensors[0].shape, (Shape{4, 8}));
  EXPECT_EQ(hf.tensors[1].shape, (Shape{4, 100}));
}

TEST(TreeBuilderTest, ScopedLoopSeesItsOwnLoopVariable) {
  TreeTemplate tree = MustParse(R"yaml(model_type: toy
tensors:
  - for: i
    count: text_config.num_layers
    scope: text_config
    prefix: "layers.{i}."
    tensors:
      - {name: w, shape: ["hidden_size + i"]}
)yaml");
  Json config = {{"hidden_size", 100}, {"text_config", {{"hidden_size", 4}, {"num_layers", 2}}}};
  ParamTree hf = MustBuild(tree, config, Layout::kHf);
  ASSERT_EQ(Names(hf), (Names_{"layers.0.w", "layers.1.w"}));
  EXPECT_EQ(hf.tensors[1].shape, (Shape{5}));
}

TEST(TreeBuilderTest, MissingScopeIsAClearError) {
  constexpr char kYaml[] = R"yaml(model_type: toy
tensors:
  - {name: a, shape: [1]}
  - scope: vision_config
    tensors: [{name: w, shape: [hidden_size]}]
)yaml";
  Diag missing = BuildError(kYaml, Json{{"hidden_size", 4}});
  EXPECT_EQ(missing.loc.file, "t.yaml");
  EXPECT_EQ(missing.loc.line, 4);
  EXPECT_NE(missing.message.find("the config has no 'vision_config' object (needed for its tensors)"),
            std::string::npos)
      << missing.message;
  Diag null = BuildError(kYaml, Json{{"vision_config", nullptr}});
  EXPECT_NE(null.message.find("no 'vision_config' object"), std::string::npos) << null.message;
  Diag number = BuildError(kYaml, Json{{"vision_config", 3}});
  EXPECT_NE(number.message.find("no 'vision_config' object"), std::string::npos) << number.message;
}

TEST(TreeBuilderTest, WhenEasyDelWhenAndLayoutsSelectTensorsPerLayout) {
  TreeTemplate tree = MustParse(R"yaml(model_type: toy
tensors:
  - {name: a, shape: [1], when: flag}
  - {name: b, shape: [1], when: "not flag", easydel_when: "false"}
  - {name: c, shape: [1], when: flag, easydel_when: "true"}
  - {name: d, shape: [1], layouts: [hf]}
  - {name: e, shape: [1], layouts: [easydel]}
  - layouts: [hf]
    tensors:
      - {name: f, shape: [1]}
      - {name: g, shape: [1], layouts: [easydel]}
      - {layouts: [easydel, hf], tensors: [{name: h, shape: [1]}]}
      - {name: i, shape: [1], easydel_when: "true"}
  - {when: flag, tensors: [{name: j, shape: [1]}]}
  - {when: "not flag", tensors: [{name: k, shape: [1], easydel_when: "false"}]}
  - {name: l, shape: [1]}
)yaml");
  Json config = {{"flag", false}};
  EXPECT_EQ(Names(MustBuild(tree, config, Layout::kHf)), (Names_{"b", "d", "f", "h", "i", "k", "l"}));
  EXPECT_EQ(Names(MustBuild(tree, config, Layout::kEasyDel)), (Names_{"c", "e", "l"}));
  config["flag"] = true;
  EXPECT_EQ(Names(MustBuild(tree, config, Layout::kHf)), (Names_{"a", "c", "d", "f", "h", "i", "j", "l"}));
  EXPECT_EQ(Names(MustBuild(tree, config, Layout::kEasyDel)), (Names_{"a", "c", "e", "j", "l"}));
}

TEST(TreeBuilderTest, AbsentGroupsAndTensorsAreNotEvaluated) {
  // Nothing under a false `when` is evaluated: a count or a shape that would be an error is fine.
  TreeTemplate tree = MustParse(R"yaml(model_type: toy
tensors:
  - {when: "false", for: i, count: "-1", tensors: [{name: w, shape: ["-1"]}]}
  - {name: x, shape: ["-1"], when: "false"}
  - {name: y, shape: ["-1"], layouts: [easydel], when: "false"}
  - {name: z, shape: [1]}
)yaml");
  EXPECT_EQ(Names(MustBuild(tree, Json::object(), Layout::kHf)), (Names_{"z"}));
}

TEST(TreeBuilderTest, HfLayoutListsExpertsOneByOneAndEasyDelStacks) {
  TreeTemplate tree = MustParse(R"yaml(model_type: toy
tensors:
  - for: i
    count: 1
    prefix: "layers.{i}.mlp."
    tensors:
      - {name: gate.weight, shape: [n, 4]}
      - {name: "experts.{expert}.w1.weight", experts: n, shape: [8, 4]}
      - {name: "experts.{expert}.w2.weight", experts: n, shape: [4, 8]}
      - {name: "none.{expert}.w.weight", experts: 0, shape: [4, 8]}
      - {name: "other.{expert}.w.weight", experts: 2, shape: [2, 2]}
)yaml");
  Json config = {{"n", 3}};
  ParamTree hf = MustBuild(tree, config, Layout::kHf);
  // One expert container's tensors are listed expert by expert, as the module stores them.
  EXPECT_EQ(Names(hf),
            (Names_{"layers.0.mlp.gate.weight", "layers.0.mlp.experts.0.w1.weight", "layers.0.mlp.experts.0.w2.weight",
                    "layers.0.mlp.experts.1.w1.weight", "layers.0.mlp.experts.1.w2.weight",
                    "layers.0.mlp.experts.2.w1.weight", "layers.0.mlp.experts.2.w2.weight",
                    "layers.0.mlp.other.0.w.weight", "layers.0.mlp.other.1.w.weight"}));
  EXPECT_EQ(hf.tensors[1].shape, (Shape{8, 4}));
  EXPECT_EQ(hf.tensors[6].shape, (Shape{4, 8}));
  ParamTree easydel = MustBuild(tree, config, Layout::kEasyDel);
  EXPECT_EQ(Names(easydel), (Names_{"layers/0/mlp/gate/kernel", "layers/0/mlp/experts/w1/kernel",
                                    "layers/0/mlp/experts/w2/kernel", "layers/0/mlp/other/w/kernel"}));
  EXPECT_EQ(easydel.tensors[1].shape, (Shape{3, 4, 8}));
  EXPECT_EQ(easydel.tensors[2].shape, (Shape{3, 8, 4}));

  auto expanded = ExpandTreeTemplate(tree, config, Options(Layout::kHf));
  ASSERT_TRUE(expanded.ok()) << expanded.status().ToString();
  ASSERT_EQ(expanded->size(), 4u);
  EXPECT_EQ((*expanded)[1].hf_name, "layers.0.mlp.experts.{expert}.w1.weight");
  EXPECT_EQ((*expanded)[1].hf_shape, (Shape{8, 4}));
  EXPECT_EQ((*expanded)[1].experts, 3);
  EXPECT_EQ((*expanded)[0].experts, 0);
}

constexpr char kFp8Template[] = R"yaml(model_type: toy
tensors:
  - {name: embed.weight, shape: [1000, 200], kind: embedding}
  - {name: q.weight, shape: [300, 200], quantizable: true}
  - {name: q.bias, shape: [300], quantizable: true}
  - {name: norm.weight, shape: [200], quantizable: true}
  - {name: "experts.{expert}.w.weight", experts: 2, shape: [256, 130], quantizable: true}
)yaml";

Json Fp8Config(Json quant) { return Json{{"torch_dtype", "bfloat16"}, {"quantization_config", std::move(quant)}}; }

TEST(TreeBuilderTest, Fp8QuantizableWeightsGetABlockScaleInHfLayoutOnly) {
  TreeTemplate tree = MustParse(kFp8Template);
  Json config = Fp8Config({{"quant_method", "fp8"}, {"fmt", "e4m3"}, {"weight_block_size", {128, 128}}});
  ParamTree hf = MustBuild(tree, config, Layout::kHf);
  std::vector<TensorEntry> expected = {
      {"embed.weight", Shape{1000, 200}, DType::kBFloat16, TensorRole::kParameter},
      {"q.weight", Shape{300, 200}, DType::kFloat8E4M3FN, TensorRole::kParameter},
      {"q.weight_scale_inv", Shape{3, 2}, DType::kFloat32, TensorRole::kScale},
      {"q.bias", Shape{300}, DType::kBFloat16, TensorRole::kParameter},       // rank 1: not quantized
      {"norm.weight", Shape{200}, DType::kBFloat16, TensorRole::kParameter},  // rank 1: not quantized
      {"experts.0.w.weight", Shape{256, 130}, DType::kFloat8E4M3FN, TensorRole::kParameter},
      {"experts.0.w.weight_scale_inv", Shape{2, 2}, DType::kFloat32, TensorRole::kScale},
      {"experts.1.w.weight", Shape{256, 130}, DType::kFloat8E4M3FN, TensorRole::kParameter},
      {"experts.1.w.weight_scale_inv", Shape{2, 2}, DType::kFloat32, TensorRole::kScale},
  };
  EXPECT_EQ(hf.tensors, expected);
  auto totals = hf.Totals();
  ASSERT_TRUE(totals.ok());
  EXPECT_EQ(totals->params, 1000 * 200 + 300 * 200 + 300 + 200 + 2 * 256 * 130);  // scales are not parameters

  ParamTree easydel = MustBuild(tree, config, Layout::kEasyDel);
  std::vector<TensorEntry> expected_easydel = {
      {"embed/embedding", Shape{1000, 200}, DType::kBFloat16, TensorRole::kParameter},
      {"q/kernel", Shape{200, 300}, DType::kBFloat16, TensorRole::kParameter},
      {"q/bias", Shape{300}, DType::kBFloat16, TensorRole::kParameter},
      {"norm/kernel", Shape{200}, DType::kBFloat16, TensorRole::kParameter},
      {"experts/w/kernel", Shape{2, 130, 256}, DType::kBFloat16, TensorRole::kParameter},
  };
  EXPECT_EQ(easydel.tensors, expected_easydel);
}

TEST(TreeBuilderTest, Fp8RespectsWeightBlockSizeAndFormat) {
  TreeTemplate tree = MustParse(kFp8Template);
  ParamTree hf = MustBuild(tree, Fp8Config({{"quant_method", "fp8"}, {"fmt", "e5m2"}, {"weight_block_size", {64, 32}}}),
                           Layout::kHf);
  const TensorEntry* weight = Find(hf, "q.weight");
  const TensorEntry* scale = Find(hf, "q.weight_scale_inv");
  ASSERT_NE(weight, nullptr);
  ASSERT_NE(scale, nullptr);
  EXPECT_EQ(weight->dtype, DType::kFloat8E5M2);
  EXPECT_EQ(scale->shape, (Shape{5, 7}));  // ceil(300 / 64), ceil(200 / 32)
  // Without weight_block_size the blocks are 128 x 128; without fmt the format is e4m3.
  ParamTree plain = MustBuild(tree, Fp8Config({{"quant_method", "fp8"}}), Layout::kHf);
  EXPECT_EQ(Find(plain, "q.weight")->dtype, DType::kFloat8E4M3FN);
  EXPECT_EQ(Find(plain, "q.weight_scale_inv")->shape, (Shape{3, 2}));
}

TEST(TreeBuilderTest, OtherQuantizationMethodsAreNotFp8) {
  TreeTemplate tree = MustParse(kFp8Template);
  for (const Json& quant : {Json{{"quant_method", "bitsandbytes"}}, Json(nullptr), Json{{"quant_method", 8}}}) {
    ParamTree hf = MustBuild(tree, Fp8Config(quant), Layout::kHf);
    EXPECT_EQ(Find(hf, "q.weight_scale_inv"), nullptr) << quant.dump();
    EXPECT_EQ(Find(hf, "q.weight")->dtype, DType::kBFloat16) << quant.dump();
  }
}

// gpt-oss: stacked expert weights [E, in, out], stored as MXFP4 blocks along `in` (transformers
// integrations/mxfp4.py); modules_to_not_convert keeps a module in the parameter dtype.
constexpr char kMxfp4Template[] = R"yaml(model_type: toy
tensors:
  - {name: model.layers.0.self_attn.qkv, shape: [4, 64, 96], quantizable: true}
  - {name: model.layers.0.mlp.experts.gate_up_proj, shape: [4, 64, 96], quantizable: true}
  - {name: model.layers.0.mlp.experts.gate_up_proj_bias, shape: [4, 96]}
  - {name: model.layers.0.mlp.experts.down_proj, shape: [4, 48, 64], quantizable: true}
)yaml";

TEST(TreeBuilderTest, Mxfp4ExpertsAreStoredAsBlocksAndScalesInHfLayoutOnly) {
  TreeTemplate tree = MustParse(kMxfp4Template);
  Json config = Fp8Config({{"quant_method", "mxfp4"}, {"modules_to_not_convert", {"model.layers.*.self_attn"}}});
  ParamTree hf = MustBuild(tree, config, Layout::kHf);
  std::vector<TensorEntry> expected = {
      {"model.layers.0.self_attn.qkv", Shape{4, 64, 96}, DType::kBFloat16, TensorRole::kParameter},
      {"model.layers.0.mlp.experts.gate_up_proj_blocks", Shape{4, 96, 2, 16}, DType::kUInt8, TensorRole::kParameter},
      {"model.layers.0.mlp.experts.gate_up_proj_scales", Shape{4, 96, 2}, DType::kUInt8, TensorRole::kScale},
      {"model.layers.0.mlp.experts.gate_up_proj_bias", Shape{4, 96}, DType::kBFloat16, TensorRole::kParameter},
      {"model.layers.0.mlp.experts.down_proj_blocks", Shape{4, 64, 2}, DType::kUInt8, TensorRole::kParameter},
      {"model.layers.0.mlp.experts.down_proj_scales", Shape{4, 64, 2}, DType::kUInt8, TensorRole::kScale},
  };
  expected[4].shape = Shape{4, 64, 2, 16};  // 48 inputs in blocks of 32: 2 blocks, the last one padded
  EXPECT_EQ(hf.tensors, expected);
  // EasyDeL dequantizes at load: one tensor per weight, in the parameter dtype.
  ParamTree easydel = MustBuild(tree, config, Layout::kEasyDel);
  ASSERT_EQ(easydel.tensors.size(), 4u);
  EXPECT_EQ(easydel.tensors[1].dtype, DType::kBFloat16);
}

TEST(TreeBuilderTest, ModulesToNotConvertMatchWholeNameComponents) {
  TreeTemplate tree = MustParse(kMxfp4Template);
  // "model.layers.0.mlp.exp" is not a module of the tree: a pattern ends at a '.' boundary.
  Json config = Fp8Config({{"quant_method", "mxfp4"}, {"modules_to_not_convert", {"model.layers.*.mlp.exp", "***"}}});
  ParamTree hf = MustBuild(tree, config, Layout::kHf);
  // "***" matches every name: nothing is converted.
  EXPECT_EQ(Find(hf, "model.layers.0.mlp.experts.gate_up_proj_blocks"), nullptr);
  config["quantization_config"]["modules_to_not_convert"] = {"model.layers.*.mlp.exp"};
  hf = MustBuild(tree, config, Layout::kHf);
  EXPECT_NE(Find(hf, "model.layers.0.mlp.experts.gate_up_proj_blocks"), nullptr);
  EXPECT_NE(Find(hf, "model.layers.0.self_attn.qkv_blocks"), nullptr);
}

TEST(TreeBuilderTest, DTypeOptionGivesTheDequantizedView) {
  for (const Json& quant : {Json{{"quant_method", "mxfp4"}}, Json{{"quant_method", "fp8"}}}) {
    TreeTemplate tree = MustParse(quant["quant_method"] == "fp8" ? kFp8Template : kMxfp4Template);
    TreeOptions options = Options(Layout::kHf);
    options.dtype = DType::kFloat16;
    ParamTree hf = MustBuild(tree, Fp8Config(quant), options);
    for (const TensorEntry& tensor : hf.tensors) {
      EXPECT_EQ(tensor.dtype, DType::kFloat16) << tensor.name;
      EXPECT_EQ(tensor.role, TensorRole::kParameter) << tensor.name;
    }
  }
}

TEST(TreeBuilderTest, BuffersOnlyWithIncludeBuffers) {
  TreeTemplate tree = MustParse(R"yaml(model_type: toy
tensors:
  - {name: w, shape: [4]}
  - {name: rotary.inv_freq, shape: [2], role: buffer, dtype: float32}
  - {name: mask, shape: [1, 1, 4, 4], role: buffer, dtype: bool}
)yaml");
  Json config = {{"torch_dtype", "float16"}};
  EXPECT_EQ(Names(MustBuild(tree, config, Layout::kHf)), (Names_{"w"}));
  TreeOptions options = Options(Layout::kHf);
  options.include_buffers = true;
  ParamTree hf = MustBuild(tree, config, options);
  ASSERT_EQ(Names(hf), (Names_{"w", "rotary.inv_freq", "mask"}));
  EXPECT_EQ(hf.tensors[0].dtype, DType::kFloat16);
  EXPECT_EQ(hf.tensors[1].dtype, DType::kFloat32);  // a fixed dtype wins over the parameter dtype
  EXPECT_EQ(hf.tensors[1].role, TensorRole::kBuffer);
  EXPECT_EQ(hf.tensors[2].dtype, DType::kBool);
  auto totals = hf.Totals();
  ASSERT_TRUE(totals.ok());
  EXPECT_EQ(totals->params, 4);                  // buffers are not parameters
  EXPECT_EQ(totals->bytes, 4 * 2 + 2 * 4 + 16);  // but they are bytes
}

TEST(TreeBuilderTest, ParamDTypePrecedence) {
  auto dtype = [](const Json& config, std::optional<DType> override_dtype = std::nullopt) {
    auto result = ParamDType(config, override_dtype);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : DType::kInt4;
  };
  Json both = {{"torch_dtype", "bfloat16"}, {"dtype", "float16"}};
  EXPECT_EQ(dtype(both, DType::kFloat32), DType::kFloat32);                                 // --dtype wins
  EXPECT_EQ(dtype(both), DType::kBFloat16);                                                 // then torch_dtype
  EXPECT_EQ(dtype(Json{{"torch_dtype", nullptr}, {"dtype", "float16"}}), DType::kFloat16);  // then dtype
  EXPECT_EQ(dtype(Json{{"dtype", "float16"}}), DType::kFloat16);
  EXPECT_EQ(dtype(Json::object()), DType::kFloat32);  // then float32
  EXPECT_EQ(dtype(Json{{"torch_dtype", "bf16"}}), DType::kBFloat16);
}

TEST(TreeBuilderTest, BadParamDTypeIsAnError) {
  auto unknown = ParamDType(Json{{"torch_dtype", "bfloat17"}}, std::nullopt);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().diag().loc.pointer, "/torch_dtype");
  EXPECT_EQ(unknown.status().diag().message, "unknown dtype 'bfloat17'");
  auto number = ParamDType(Json{{"dtype", 16}}, std::nullopt);
  ASSERT_FALSE(number.ok());
  EXPECT_EQ(number.status().diag().loc.pointer, "/dtype");
  EXPECT_NE(number.status().diag().message.find("expected a dtype name"), std::string::npos);
  // The override makes a bad config dtype irrelevant; the builder reports it otherwise.
  EXPECT_TRUE(ParamDType(Json{{"torch_dtype", "bfloat17"}}, DType::kBFloat16).ok());
  Diag diag = BuildError("model_type: toy\ntensors: [{name: a, shape: [1]}]\n", Json{{"torch_dtype", "bfloat17"}});
  EXPECT_EQ(diag.message, "unknown dtype 'bfloat17'");
}

TEST(TreeBuilderTest, NegativeDimIsAnErrorAtTheTemplateLine) {
  Diag diag = BuildError(R"yaml(model_type: toy
tensors:
  - prefix: "blk."
    tensors:
      - {name: ok, shape: [1]}
      - {name: w, shape: [4, hidden_size - 10]}
)yaml",
                         Json{{"hidden_size", 4}});
  EXPECT_EQ(diag.loc.file, "t.yaml");
  EXPECT_EQ(diag.loc.line, 6);
  EXPECT_TRUE(diag.loc.pointer.empty());
  EXPECT_EQ(diag.message, "tensor 'blk.w': dim 1 'hidden_size - 10' must be a non-negative integer, found -6");
}

TEST(TreeBuilderTest, NonIntegerDimsAreErrors) {
  constexpr char kYaml[] = "model_type: toy\ntensors:\n  - {name: w, shape: [d]}\n";
  Diag fraction =
      BuildError("model_type: toy\ntensors:\n  - {name: w, shape: [hidden_size / 3]}\n", Json{{"hidden_size", 4}});
  EXPECT_NE(fraction.message.find("must be a non-negative integer, found 1.33"), std::string::npos) << fraction.message;
  Diag missing = BuildError(kYaml, Json::object());
  EXPECT_NE(missing.message.find("must be a non-negative integer, found null"), std::string::npos) << missing.message;
  Diag text = BuildError(kYaml, Json{{"d", "4"}});
  EXPECT_NE(text.message.find("must be a non-negative integer, found \"4\""), std::string::npos) << text.message;
  Diag boolean = BuildError(kYaml, Json{{"d", true}});
  EXPECT_NE(boolean.message.find("must be a non-negative integer"), std::string::npos) << boolean.message;
  Diag eval = BuildError("model_type: toy\ntensors:\n  - {name: w, shape: [\"1 // 0\"]}\n", Json::object());
  EXPECT_EQ(eval.loc.line, 3);
  EXPECT_NE(eval.message.find("tensor 'w': dim 0 '1 // 0'"), std::string::npos) << eval.message;
}

TEST(TreeBuilderTest, OverflowingShapeIsAnError) {
  Diag diag = BuildError("model_type: toy\ntensors:\n  - {name: w, shape: [4294967296, 4294967296]}\n", Json::object());
  EXPECT_EQ(diag.loc.line, 3);
  EXPECT_EQ(diag.message, "tensor 'w' with shape [4294967296, 4294967296] has more elements than fit in 64 bits");
  // One expert fits, all of them stacked do not.
  Diag experts =
      BuildError("model_type: toy\ntensors:\n  - {name: \"e.{expert}.w\", experts: 4, shape: [4611686018427387904]}\n",
                 Json::object());
  EXPECT_NE(experts.message.find("has more elements than fit in 64 bits"), std::string::npos) << experts.message;
}

TEST(TreeBuilderTest, MaxTensorsIsEnforced) {
  constexpr char kYaml[] = R"yaml(model_type: toy
tensors:
  - {for: i, count: 3, prefix: "l.{i}.", tensors: [{name: a, shape: [1]}, {name: b, shape: [1]}]}
)yaml";
  TreeOptions options;
  options.max_tensors = 6;
  EXPECT_EQ(BuildError(kYaml, Json::object(), options).message, "no error");
  options.max_tensors = 5;
  Diag diag = BuildError(kYaml, Json::object(), options);
  EXPECT_EQ(diag.loc.line, 3);
  EXPECT_EQ(diag.message, "the tree has more than 5 tensors (the limit; raise it with --max-tensors)");
  // Experts count one tensor each, and an FP8 weight two.
  Diag experts = BuildError("model_type: toy\ntensors:\n  - {name: \"e.{expert}\", experts: 6, shape: [1]}\n",
                            Json::object(), options);
  EXPECT_NE(experts.message.find("more than 5 tensors"), std::string::npos) << experts.message;
  Diag fp8 = BuildError(
      "model_type: toy\ntensors:\n  - {name: \"e.{expert}\", experts: 3, shape: [1, 1], "
      "quantizable: true}\n",
      Json{{"quantization_config", {{"quant_method", "fp8"}}}}, options);
  EXPECT_NE(fp8.message.find("more than 5 tensors"), std::string::npos) << fp8.message;
}

TEST(TreeBuilderTest, HugeCountsFailFastWithTheLimitMessage) {
  // This process's CPU time, not the wall clock: a loaded machine stretches the wall clock, never the
  // work done, and it is the work (no loop over the count) that this pins.
  const std::clock_t start = std::clock();
  Diag loop = BuildError(R"yaml(model_type: toy
tensors:
  - {for: i, count: 1000000000000, tensors: [{name: "w{i}", shape: [1]}]}
)yaml",
                         Json::object());
  EXPECT_EQ(loop.loc.line, 3);
  EXPECT_EQ(loop.message,
            "'i' repeats 1000000000000 times, more than the tensor limit 10000000 (raise it with --max-tensors)");
  Diag experts = BuildError(
      "model_type: toy\ntensors:\n  - {name: \"e.{expert}\", experts: 1000000000000, shape: [1]}\n", Json::object());
  EXPECT_NE(experts.message.find("more than 10000000 tensors"), std::string::npos) << experts.message;
  Diag largest = BuildError(
      "model_type: toy\ntensors:\n  - {name: \"e.{expert}\", experts: 9223372036854775807, shape: [0, 0], "
      "quantizable: true}\n",
      Json{{"quantization_config", {{"quant_method", "fp8"}}}});
  EXPECT_NE(largest.message.find("more than 10000000 tensors"), std::string::npos) << largest.message;
  EXPECT_LT(static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC, 5.0);
}

TEST(TreeBuilderTest, NamePlaceholderMustBeAnIntegerOrAString) {
  Diag list = BuildError("model_type: toy\ntensors:\n  - {name: \"l.{layer_types}.w\", shape: [1]}\n",
                         Json{{"layer_types", {"full", "sliding"}}});
  EXPECT_EQ(list.loc.line, 3);
  EXPECT_EQ(list.message,
            "name placeholder '{layer_types}' in 'l.{layer_types}.w' must be an integer or a string, found "
            "[\"full\",\"sliding\"]");
  Diag null = BuildError(
      "model_type: toy\ntensors:\n  - {prefix: \"p.{missing}.\", tensors: [{name: w, shape: "
      "[1]}]}\n",
      Json::object());
  EXPECT_NE(null.message.find("must be an integer or a string, found null"), std::string::npos) << null.message;
  // Strings are spliced in as they are.
  TreeTemplate tree = MustParse("model_type: toy\ntensors:\n  - {name: \"{kind}.w\", shape: [1]}\n");
  EXPECT_EQ(Names(MustBuild(tree, Json{{"kind", "attn"}}, Layout::kHf)), (Names_{"attn.w"}));
}

TEST(TreeBuilderTest, CountMustBeANonNegativeInteger) {
  Diag diag = BuildError("model_type: toy\ntensors:\n  - {for: i, count: n, tensors: [{name: w, shape: [1]}]}\n",
                         Json{{"n", -2}});
  EXPECT_EQ(diag.loc.line, 3);
  EXPECT_EQ(diag.message, "count 'n' must be a non-negative integer, found -2");
}

// ---- The real templates over the project's examples ------------------------------------------------

struct Example {
  std::string dir;
  int64_t hf_tensors;  // -1 = not pinned
  int64_t hf_params;
  int64_t easydel_params;                // -1 = not pinned
  std::string easydel_only_prefix = "";  // a template's easydel_prefix, absent from the HF names
};

class ExampleTreeTest : public ::testing::Test {
 protected:
  ExampleTreeTest() : schemas_(DataSource::Embedded()) {}

  StatusOr<ResolvedConfig> Resolve(const std::string& dir) {
    std::string path = testing::SourceDir() + "/examples/" + dir + "/config.json";
    EP_ASSIGN_OR_RETURN(Document doc, ParseJsonDocument(testing::ReadTestFile(path), "x.json"));
    ConfigInput input{std::move(doc), std::nullopt, {}};
    return ResolveConfig(input, ResolveOptions{}, schemas_);
  }

  const TreeTemplate* Tree(const ResolvedConfig& resolved) {
    auto tree = schemas_.Tree(resolved.family);
    EXPECT_TRUE(tree.ok()) << tree.status().ToString();
    return tree.ok() ? *tree : nullptr;
  }

  SchemaSet schemas_;
};

const std::vector<Example>& Examples() {
  static const std::vector<Example> examples = {
      {"llama-3.1-8b", 291, 8'030'261'248, -1},
      {"mixtral-8x7b", 995, 46'702'792'704, -1},
      {"qwen3-30b-a3b", 18'867, 30'532'122'624, -1},
      {"gpt2", 148, 124'439'808, -1, "transformer."},
      {"phi-3-mini", 195, 3'821'079'552, -1},
      {"deepseek-v3", -1, 684'489'845'504, 671'026'419'200},
      {"gemma-2-9b", -1, -1, -1},
      {"gemma-3-4b", -1, -1, -1},
      {"qwen2.5-7b", -1, -1, -1},
  };
  return examples;
}

TEST_F(ExampleTreeTest, HfTensorCountsAndParamsMatchTheReleasedCheckpoints) {
  for (const Example& example : Examples()) {
    SCOPED_TRACE(example.dir);
    auto resolved = Resolve(example.dir);
    ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
    const TreeTemplate* tree = Tree(*resolved);
    ASSERT_NE(tree, nullptr);
    auto hf = BuildParamTree(*tree, resolved->config, Options(Layout::kHf));
    ASSERT_TRUE(hf.ok()) << hf.status().ToString();
    auto totals = hf->Totals();
    ASSERT_TRUE(totals.ok()) << totals.status().ToString();
    if (example.hf_tensors >= 0) {
      EXPECT_EQ(totals->tensors, example.hf_tensors);
    }
    if (example.hf_params >= 0) {
      EXPECT_EQ(totals->params, example.hf_params);
    }
    auto easydel = BuildParamTree(*tree, resolved->config, Options(Layout::kEasyDel));
    ASSERT_TRUE(easydel.ok()) << easydel.status().ToString();
    auto easydel_totals = easydel->Totals();
    ASSERT_TRUE(easydel_totals.ok());
    if (example.easydel_params >= 0) {
      EXPECT_EQ(easydel_totals->params, example.easydel_params);
    }
    // Every name is unique in both layouts.
    for (const ParamTree* layout : {&*hf, &*easydel}) {
      std::set<std::string> seen;
      for (const TensorEntry& tensor : layout->tensors) EXPECT_TRUE(seen.insert(tensor.name).second) << tensor.name;
    }
  }
}

TEST_F(ExampleTreeTest, DeepSeekV3HfLayoutIsFp8WithScales) {
  auto resolved = Resolve("deepseek-v3");
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  auto hf = BuildParamTree(*Tree(*resolved), resolved->config, Options(Layout::kHf));
  ASSERT_TRUE(hf.ok()) << hf.status().ToString();
  const TensorEntry* expert = Find(*hf, "model.layers.3.mlp.experts.255.down_proj.weight");
  ASSERT_NE(expert, nullptr);
  EXPECT_EQ(expert->shape, (Shape{7168, 2048}));
  EXPECT_EQ(expert->dtype, DType::kFloat8E4M3FN);
  const TensorEntry* scale = Find(*hf, "model.layers.3.mlp.experts.255.down_proj.weight_scale_inv");
  ASSERT_NE(scale, nullptr);
  EXPECT_EQ(scale->shape, (Shape{56, 16}));
  EXPECT_EQ(scale->role, TensorRole::kScale);
  EXPECT_EQ(Find(*hf, "model.embed_tokens.weight")->dtype, DType::kBFloat16);
  EXPECT_EQ(Find(*hf, "model.layers.3.mlp.gate.e_score_correction_bias")->dtype, DType::kFloat32);
  EXPECT_NE(Find(*hf, "model.layers.61.eh_proj.weight"), nullptr);  // the MTP layer, HF only
  auto easydel = BuildParamTree(*Tree(*resolved), resolved->config, Options(Layout::kEasyDel));
  ASSERT_TRUE(easydel.ok());
  const TensorEntry* stacked = Find(*easydel, "model/layers/3/mlp/experts/down_proj/kernel");
  ASSERT_NE(stacked, nullptr);
  EXPECT_EQ(stacked->shape, (Shape{256, 2048, 7168}));
  EXPECT_EQ(stacked->dtype, DType::kBFloat16);
  for (const TensorEntry& tensor : easydel->tensors) {
    EXPECT_EQ(tensor.name.find("model/layers/61/"), std::string::npos) << tensor.name;
    EXPECT_NE(tensor.role, TensorRole::kScale) << tensor.name;
  }
}

std::string PerExpertName(const std::string& name, int64_t expert) {
  std::string text = name;
  text.replace(text.find(kExpertPlaceholder), kExpertPlaceholder.size(), std::to_string(expert));
  return text;
}

// Converting every EasyDeL tensor back with EasyDelToHf gives exactly the HF tensors of the same
// template entry; every HF tensor that is not covered so is HF-only (an FP8 scale or a layouts: [hf]
// tensor).
TEST_F(ExampleTreeTest, EasyDelTensorsConvertBackToTheHfTensors) {
  for (const Example& example : Examples()) {
    SCOPED_TRACE(example.dir);
    auto resolved = Resolve(example.dir);
    ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
    const TreeTemplate* tree = Tree(*resolved);
    ASSERT_NE(tree, nullptr);
    auto expanded = ExpandTreeTemplate(*tree, resolved->config, Options(Layout::kHf));
    ASSERT_TRUE(expanded.ok()) << expanded.status().ToString();
    auto hf = BuildParamTree(*tree, resolved->config, Options(Layout::kHf));
    ASSERT_TRUE(hf.ok());
    std::map<std::string, Shape> hf_shapes;
    for (const TensorEntry& tensor : hf->tensors) hf_shapes.emplace(tensor.name, tensor.shape);

    std::set<std::string> covered;
    int64_t compared = 0;
    for (const ExpandedTensor& tensor : *expanded) {
      if (!tensor.in_easydel) continue;
      std::vector<NamedShape> back = EasyDelToHf(tensor.easydel_name, tensor.easydel_shape, tensor.experts);
      for (NamedShape& one : back) {
        // gpt2's EasyDeL paths keep the module prefix its checkpoint names lack.
        const std::string& prefix = example.easydel_only_prefix;
        if (!prefix.empty() && one.name.starts_with(prefix)) one.name.erase(0, prefix.size());
      }
      std::vector<NamedShape> want;
      for (int64_t e = 0; e < std::max<int64_t>(tensor.experts, 1); ++e) {
        want.push_back({tensor.experts > 0 ? PerExpertName(tensor.hf_name, e) : tensor.hf_name, tensor.hf_shape});
      }
      ASSERT_EQ(back, want) << tensor.easydel_name;
      // An EasyDeL-only tensor (the lm_head of a tied model) has no HF counterpart to compare.
      for (const NamedShape& one : want) {
        auto it = hf_shapes.find(one.name);
        if (it == hf_shapes.end()) {
          EXPECT_FALSE(tensor.in_hf) << one.name;
          continue;
        }
        EXPECT_EQ(it->second, one.shape) << one.name;
        covered.insert(one.name);
        ++compared;
      }
    }
    EXPECT_GT(compared, 0);
    std::set<std::string> hf_only;
    for (const ExpandedTensor& tensor : *expanded) {
      if (!tensor.in_hf || tensor.in_easydel) continue;
      for (int64_t e = 0; e < std::max<int64_t>(tensor.experts, 1); ++e) {
        hf_only.insert(tensor.experts > 0 ? PerExpertName(tensor.hf_name, e) : tensor.hf_name);
      }
    }
    for (const TensorEntry& tensor : hf->tensors) {
      if (covered.contains(tensor.name)) continue;
      EXPECT_TRUE(hf_only.contains(tensor.name)) << tensor.name << " has no EasyDeL counterpart";
      EXPECT_TRUE(tensor.role == TensorRole::kScale || tensor.name.starts_with("model.layers.61."))
          << tensor.name << " is HF-only";
    }
  }
}

}  // namespace
}  // namespace easyplan::schemas
