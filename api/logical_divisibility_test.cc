// Heads, kv heads and experts that their tensor- or expert-parallel axis does not divide are a
// logical-indivisible error for every built-in family, whether or not the dim's size (heads x head_dim)
// happens to divide: README "validate", docs/RULES.md#counting-dims.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "api/plan_pipeline.h"
#include "api/test_models.h"
#include "planner/findings.h"

namespace easyplan::api {
namespace {

std::vector<std::string> BuiltInFamilies() {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(testing::SourceDir() + "/schemas/families")) {
    const std::string name = entry.path().stem().string();
    // _hf_base is shared data; gemma3's text tower is gemma3_text (its config nests it in text_config)
    // and its vision tower is siglip_vision_model, which the text rules do not plan.
    if (name.front() != '_' && name != "siglip_vision_model" && name != "gemma3") out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The smallest t > 1 that does not divide `count` and, as asked, does or does not divide `size`.
int64_t AxisNotDividing(int64_t count, int64_t size, bool size_divides) {
  for (int64_t t = 2; t <= 4 * size; ++t) {
    if (count % t != 0 && (size % t == 0) == size_divides) return t;
  }
  return 0;
}

std::string Mesh(int64_t ep, int64_t tp) {
  return "dp=1,fsdp=1,ep=" + std::to_string(ep) + ",tp=" + std::to_string(tp) + ",sp=1";
}

std::vector<std::string> LogicalErrors(const std::shared_ptr<const Model>& model, const std::string& mesh) {
  PlanOptions options;
  options.mesh = mesh;
  auto planned = PlanModel(model, options);
  EXPECT_TRUE(planned.ok()) << planned.status().ToString();
  std::vector<std::string> out;
  if (!planned.ok()) return out;
  for (const planner::Finding& f : planned->plan.findings) {
    if (f.code == planner::FindingCode::kLogicalIndivisible) out.push_back(f.message);
  }
  return out;
}

bool AnyMentions(const std::vector<std::string>& messages, const std::string& what) {
  for (const std::string& m : messages) {
    if (m.find(what) != std::string::npos) return true;
  }
  return false;
}

class LogicalDivisibilityTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LogicalDivisibilityTest, HeadsTpDoesNotDivideAreAnErrorWhateverTheDimSize) {
  auto loaded = Model::Load(Environment::Real(), ConfigSource::Text("{\"model_type\": \"" + GetParam() + "\"}"), {});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const Json& config = (*loaded)->config();
  const int64_t heads = config.value("num_attention_heads", int64_t{0});
  const int64_t head_dim = config.value("head_dim", int64_t{0});
  ASSERT_GT(heads * head_dim, 0) << GetParam();
  if (GetParam() == "gpt2") {
    // EasyDeL's GPT-2 rules put tp on the input dim of c_attn (a Conv1D kernel stored [out, in]), so
    // tp never splits its heads: its counted dim is lm_head's vocabulary.
    const int64_t vocab = config.value("vocab_size", int64_t{0});
    ASSERT_GT(vocab, 0);
    const int64_t tp = AxisNotDividing(vocab, vocab, false);
    EXPECT_TRUE(AnyMentions(LogicalErrors(*loaded, Mesh(1, tp)), "vocabulary")) << "tp=" << tp;
    return;
  }
  for (bool size_divides : {true, false}) {
    const int64_t tp = AxisNotDividing(heads, heads * head_dim, size_divides);
    ASSERT_GT(tp, 0);
    const std::vector<std::string> errors = LogicalErrors(*loaded, Mesh(1, tp));
    EXPECT_TRUE(AnyMentions(errors, "attention heads"))
        << GetParam() << ": " << heads << " heads x " << head_dim << " on tp=" << tp
        << (size_divides ? " (the size divides)" : " (the size does not divide)");
  }
}

// Every MoE family: the experts on an ep that does not divide their count (the dim is the count).
TEST(LogicalDivisibilityTest, ExpertsEpDoesNotDivideAreAnErrorInEveryMoeFamily) {
  int moe_families = 0;
  for (const std::string& family : BuiltInFamilies()) {
    auto loaded = Model::Load(Environment::Real(), ConfigSource::Text("{\"model_type\": \"" + family + "\"}"), {});
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    const Json& config = (*loaded)->config();
    int64_t experts = 0;
    for (const char* key : {"n_routed_experts", "num_local_experts", "num_experts"}) {
      if (experts == 0 && config.contains(key) && config[key].is_number_integer()) experts = config[key].get<int64_t>();
    }
    if (experts <= 1) continue;
    ++moe_families;
    const int64_t ep = AxisNotDividing(experts, experts, false);
    EXPECT_TRUE(AnyMentions(LogicalErrors(*loaded, Mesh(ep, 1)), "experts"))
        << family << ": " << experts << " experts on ep=" << ep;
  }
  EXPECT_EQ(moe_families, 5);  // deepseek_v2, deepseek_v3, mixtral, qwen2_moe, qwen3_moe
}

INSTANTIATE_TEST_SUITE_P(BuiltInFamilies, LogicalDivisibilityTest, ::testing::ValuesIn(BuiltInFamilies()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) { return param_info.param; });

}  // namespace
}  // namespace easyplan::api
