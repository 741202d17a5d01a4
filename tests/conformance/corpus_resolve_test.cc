// Resolves the real public configs of ../shared/corpus with the built-in schemas and pins the
// values transformers' config classes derive for each (src/transformers/models/*/configuration_*.py: head_dim,
// kv heads, layer types, MoE layers, aliases).
#include <gtest/gtest.h>

#include <filesystem>

#include "core/document.h"
#include "core/json_parse.h"
#include "schemas/resolver.h"
#include "tests/test_util.h"

namespace easyplan {
namespace {

namespace fs = std::filesystem;

StatusOr<schemas::ResolvedConfig> ResolveCorpus(const std::string& model_dir) {
  std::string path = testing::CorpusDir() + "/" + model_dir + "/config.json";
  EP_ASSIGN_OR_RETURN(Document doc, ParseJsonDocument(testing::ReadTestFile(path), path));
  schemas::SchemaSet schemas(schemas::DataSource::Embedded());
  schemas::ConfigInput input{std::move(doc), std::nullopt, {}};
  return schemas::ResolveConfig(input, schemas::ResolveOptions{}, schemas);
}

Json Repeat(const std::string& value, int times) {
  Json list = Json::array();
  for (int i = 0; i < times; ++i) list.push_back(value);
  return list;
}

// Per model: key -> the value the transformers config class gives the resolved config.
struct Expectation {
  std::string model_dir;
  std::string family;
  Json values;
};

std::vector<Expectation> Expectations() {
  Json gemma2_layers = Json::array();
  for (int i = 0; i < 42; ++i) gemma2_layers.push_back((i + 1) % 2 == 1 ? "sliding_attention" : "full_attention");
  Json v2_lite_mlp = Repeat("sparse", 27);
  v2_lite_mlp[0] = "dense";
  Json v3_mlp = Repeat("sparse", 61);
  for (int i = 0; i < 3; ++i) v3_mlp[i] = "dense";
  return {
      {"meta-llama-Llama-3.1-8B-Instruct",
       "llama",
       {{"head_dim", 128}, {"num_key_value_heads", 8}, {"tie_word_embeddings", false}, {"rope_theta", 500000.0}}},
      {"meta-llama-Meta-Llama-3.1-8B", "llama", {{"head_dim", 128}, {"num_key_value_heads", 8}}},
      {"meta-llama-Llama-2-7b-hf", "llama", {{"head_dim", 128}, {"num_key_value_heads", 32}}},
      {"mistralai-Mistral-7B-v0.1",
       "mistral",
       {{"head_dim", 128}, {"num_key_value_heads", 8}, {"sliding_window", 4096}}},
      {"mistralai-Mixtral-8x7B-v0.1",
       "mixtral",
       {{"head_dim", 128},
        {"num_local_experts", 8},
        {"num_experts", 8},
        {"num_experts_per_tok", 2},
        {"mlp_layer_types", Repeat("sparse", 32)}}},
      {"Qwen-Qwen2.5-7B-Instruct",
       "qwen2",
       {{"head_dim", 128},
        {"num_key_value_heads", 4},
        {"sliding_window", nullptr},
        {"layer_types", Repeat("full_attention", 28)}}},
      {"Qwen-Qwen3-8B",
       "qwen3",
       {{"head_dim", 128}, {"num_key_value_heads", 8}, {"layer_types", Repeat("full_attention", 36)}}},
      {"Qwen-Qwen3-30B-A3B",
       "qwen3_moe",
       {{"head_dim", 128},
        {"num_key_value_heads", 4},
        {"num_local_experts", 128},
        {"num_experts", 128},
        {"moe_intermediate_size", 768},
        {"mlp_layer_types", Repeat("sparse", 48)}}},
      {"google-gemma-2b-it", "gemma", {{"head_dim", 256}, {"num_key_value_heads", 1}, {"tie_word_embeddings", true}}},
      {"google-gemma-2-9b-it",
       "gemma2",
       {{"head_dim", 256}, {"num_key_value_heads", 8}, {"tie_word_embeddings", true}, {"layer_types", gemma2_layers}}},
      {"microsoft-Phi-3-mini-4k-instruct", "phi3", {{"head_dim", 96}, {"num_key_value_heads", 32}}},
      {"deepseek-ai-DeepSeek-V2-Lite",
       "deepseek_v2",
       {{"head_dim", 64}, {"num_key_value_heads", 16}, {"n_routed_experts", 64}, {"mlp_layer_types", v2_lite_mlp}}},
      {"deepseek-ai-DeepSeek-V3",
       "deepseek_v3",
       {{"head_dim", 64},
        {"qk_head_dim", 192},
        {"n_routed_experts", 256},
        {"num_local_experts", 256},
        {"mlp_layer_types", v3_mlp}}},
      {"openai-community-gpt2",
       "gpt2",
       {{"hidden_size", 768},
        {"num_hidden_layers", 12},
        {"num_attention_heads", 12},
        {"max_position_embeddings", 1024},
        {"head_dim", 64},
        {"intermediate_size", 3072},
        {"tie_word_embeddings", true}}},
  };
}

void PrintTo(const Expectation& expectation, std::ostream* os) { *os << expectation.model_dir; }

class CorpusTest : public ::testing::TestWithParam<Expectation> {};

TEST_P(CorpusTest, ResolvesCleanlyWithStatedDerivedValues) {
  EASYPLAN_SKIP_WITHOUT_CORPUS();
  const Expectation& expected = GetParam();
  auto resolved = ResolveCorpus(expected.model_dir);
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  EXPECT_EQ(resolved->family, expected.family);
  for (const Diag& diag : resolved->diags) ADD_FAILURE() << "unexpected diagnostic: " << diag.ToString();
  for (const auto& [key, value] : expected.values.items()) {
    ASSERT_TRUE(resolved->config.contains(key)) << key;
    EXPECT_EQ(resolved->config[key], value) << key;
  }
  // EasyDeL add_basic_configurations defaults (easydel/infra/base_config.py at 090a03b2, the default
  // version: :1617, :1650, :1635) are present with their provenance.
  EXPECT_EQ(resolved->config["blocksize_q"], 512);
  EXPECT_EQ(resolved->config["attn_dtype"], "bfloat16");
  EXPECT_EQ(resolved->config["scan_attention_layers"], false);
  EXPECT_EQ(resolved->config["platform"], "jax");
  EXPECT_EQ(resolved->provenance["blocksize_q"], "default:easydel");
  EXPECT_EQ(resolved->config["partition_axis"]["batch_axis"], Json({"fsdp", "dp"}));
  // Every key the file holds is still there (unknown keys pass through): unchanged with provenance
  // "file", or recomputed (Qwen2 nulls sliding_window when use_sliding_window is false) as "derived".
  std::string path = testing::CorpusDir() + "/" + expected.model_dir + "/config.json";
  Json file = Json::parse(testing::ReadTestFile(path));
  for (const auto& item : file.items()) {
    ASSERT_TRUE(resolved->config.contains(item.key())) << item.key();
    bool unchanged = resolved->config[item.key()] == item.value();
    EXPECT_EQ(resolved->provenance[item.key()], unchanged ? "file" : "derived") << item.key();
  }
}

TEST(CorpusCoverageTest, EveryCorpusConfigHasAnExpectation) {
  EASYPLAN_SKIP_WITHOUT_CORPUS();
  std::set<std::string> covered;
  for (const Expectation& e : Expectations()) covered.insert(e.model_dir);
  for (const auto& entry : fs::directory_iterator(testing::CorpusDir())) {
    if (!fs::exists(entry.path() / "config.json")) continue;
    EXPECT_TRUE(covered.count(entry.path().filename().string())) << entry.path();
    auto resolved = ResolveCorpus(entry.path().filename().string());
    EXPECT_TRUE(resolved.ok()) << resolved.status().ToString();
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusTest, ::testing::ValuesIn(Expectations()),
                         [](const ::testing::TestParamInfo<Expectation>& param_info) {
                           std::string name = param_info.param.model_dir;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace easyplan
