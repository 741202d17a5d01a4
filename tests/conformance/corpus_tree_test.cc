// Builds the parameter tree of every real config in ../shared/corpus from the family templates and
// pins it to the facts: parameter counts (as published in the keras-hub presets' metadata.params,
// keras-team/keras-hub keras_hub/src/models/*/*_presets.py, or computed from the transformers model
// classes), and, where the corpus holds the model's index file, exactly the index's tensor names and its
// metadata.total_size in bytes.
#include <gtest/gtest.h>

#include "core/checkpoint.h"
#include "core/document.h"
#include "core/json_parse.h"
#include "core/tree_diff.h"
#include "schemas/resolver.h"
#include "schemas/tree_builder.h"
#include "tests/test_util.h"

namespace easyplan {
namespace {

struct TreeFacts {
  std::string model_dir;
  std::string config_file;  // inside model_dir
  int64_t hf_params;        // stored tensors, tied head once (keras-hub metadata.params where published)
  std::string index_file;   // "" when the corpus has none
  bool include_buffers = false;
};

std::ostream& operator<<(std::ostream& os, const TreeFacts& facts) { return os << facts.model_dir; }

std::vector<TreeFacts> AllTreeFacts() {
  return {
      {"meta-llama-Llama-2-7b-hf", "config.json", 6'738'415'616, ""},
      {"meta-llama-Llama-2-7b-hf", "config.resaved-fp32.json", 6'738'415'616,
       "pytorch_model.bin.index.resaved-fp32.json", /*include_buffers=*/true},
      {"meta-llama-Llama-3.1-8B-Instruct", "config.json", 8'030'261'248, ""},
      {"meta-llama-Meta-Llama-3.1-8B", "config.json", 8'030'261'248, ""},
      {"mistralai-Mistral-7B-v0.1", "config.json", 7'241'732'096, ""},
      {"mistralai-Mixtral-8x7B-v0.1", "config.json", 46'702'792'704, "model.safetensors.index.json"},
      {"Qwen-Qwen2.5-7B-Instruct", "config.json", 7'615'616'512, ""},
      {"Qwen-Qwen3-8B", "config.json", 8'190'735'360, ""},
      {"Qwen-Qwen3-30B-A3B", "config.json", 30'532'122'624, ""},
      {"google-gemma-2b-it", "config.json", 2'506'172'416, "model.safetensors.index.json"},
      {"google-gemma-2-9b-it", "config.json", 9'241'705'984, "model.safetensors.index.json"},
      {"microsoft-Phi-3-mini-4k-instruct", "config.json", 3'821'079'552, "model.safetensors.index.json"},
      {"deepseek-ai-DeepSeek-V2-Lite", "config.json", 15'706'484'224, ""},
      // The checkpoint holds the main model (671,026,419,200) plus the MTP layer with its stored copies
      // of embedding and head (13,463,426,304).
      {"deepseek-ai-DeepSeek-V3", "config.json", 684'489'845'504, ""},
      {"openai-community-gpt2", "config.json", 124'439'808, ""},
  };
}

class CorpusTreeTest : public ::testing::TestWithParam<TreeFacts> {
 protected:
  void SetUp() override { EASYPLAN_SKIP_WITHOUT_CORPUS(); }

  ParamTree Build(Layout layout, bool include_buffers) {
    const TreeFacts& facts = GetParam();
    std::string path = testing::CorpusDir() + "/" + facts.model_dir + "/" + facts.config_file;
    auto doc = ParseJsonDocument(testing::ReadTestFile(path), path);
    EXPECT_TRUE(doc.ok()) << doc.status().ToString();
    schemas::SchemaSet schemas(schemas::DataSource::Embedded());
    schemas::ConfigInput input{std::move(*doc), std::nullopt, {}};
    auto resolved = schemas::ResolveConfig(input, schemas::ResolveOptions{}, schemas);
    EXPECT_TRUE(resolved.ok()) << resolved.status().ToString();
    auto tree_template = schemas.Tree(resolved->family);
    EXPECT_TRUE(tree_template.ok() && *tree_template != nullptr) << "no template for " << resolved->family;
    schemas::TreeOptions options;
    options.layout = layout;
    options.include_buffers = include_buffers;
    auto tree = schemas::BuildParamTree(**tree_template, resolved->config, options);
    EXPECT_TRUE(tree.ok()) << tree.status().ToString();
    return *tree;
  }
};

TEST_P(CorpusTreeTest, HfTreeHasThePublishedParameterCount) {
  auto totals = Build(Layout::kHf, /*include_buffers=*/false).Totals();
  ASSERT_TRUE(totals.ok());
  EXPECT_EQ(totals->params, GetParam().hf_params);
}

// Instantiated only for the models whose index file the corpus holds.
class CorpusIndexTest : public CorpusTreeTest {};

TEST_P(CorpusIndexTest, HfTreeHasExactlyTheIndexTensorsAndTotalSize) {
  const TreeFacts& facts = GetParam();
  RealFileSystem fs;
  auto checkpoint = ReadCheckpoint(fs, testing::CorpusDir() + "/" + facts.model_dir + "/" + facts.index_file);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  ASSERT_TRUE(checkpoint->index_total_size.has_value());
  ParamTree tree = Build(Layout::kHf, facts.include_buffers);

  TreeDiff diff = DiffTrees(tree, *checkpoint);
  for (const TreeDifference& item : diff.differences) {
    ADD_FAILURE() << TreeDifferenceKindName(item.kind) << " " << item.name << " expected " << item.expected_bytes
                  << " found " << item.found_bytes;
  }
  EXPECT_EQ(tree.tensors.size(), checkpoint->tensors.size());
  auto totals = tree.Totals();
  ASSERT_TRUE(totals.ok());
  EXPECT_EQ(totals->bytes, *checkpoint->index_total_size);
}

TEST_P(CorpusTreeTest, EasyDelTreeHoldsTheSameParametersPlusAnUntiedHeadVariable) {
  // EasyDeL always has lm_head/kernel; checkpoints of tied models do not store it; MTP layers and
  // buffers exist only in checkpoints.
  ParamTree hf = Build(Layout::kHf, false);
  ParamTree easydel = Build(Layout::kEasyDel, false);
  int64_t hf_params = hf.Totals()->params;
  int64_t easydel_params = easydel.Totals()->params;
  EXPECT_GE(easydel_params, GetParam().model_dir == "deepseek-ai-DeepSeek-V3" ? 671'026'419'200 : hf_params);
  for (const TensorEntry& tensor : easydel.tensors) {
    EXPECT_EQ(tensor.name.find('.'), std::string::npos) << tensor.name << " is not a '/' path";
  }
}

std::string TreeCaseName(const ::testing::TestParamInfo<TreeFacts>& param) {
  std::string name = param.param.model_dir + "_" + param.param.config_file;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

std::vector<TreeFacts> FactsWithIndex() {
  std::vector<TreeFacts> out;
  for (const TreeFacts& facts : AllTreeFacts()) {
    if (!facts.index_file.empty()) out.push_back(facts);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusTreeTest, ::testing::ValuesIn(AllTreeFacts()), TreeCaseName);
INSTANTIATE_TEST_SUITE_P(Corpus, CorpusIndexTest, ::testing::ValuesIn(FactsWithIndex()), TreeCaseName);

}  // namespace
}  // namespace easyplan
