// Heads, kv heads and experts that their tensor- or expert-parallel axis does not divide are a
// logical-indivisible error for every built-in family, whether or not the dim's size (heads x head_dim)
// happens to divide: README "validate", docs/RULES.md#counting-dims.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/plan_pipeline.h"
#include "api/test_models.h"
#include "planner/findings.h"
#include "schemas/model_dims.h"

namespace easyplan::api {
namespace {

std::vector<std::string> BuiltInFamilies() {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(testing::SourceDir() + "/schemas/families")) {
    const std::string name = entry.path().stem().string();
    // _hf_base is shared data. A multimodal wrapper's text tower is a family of its own (gemma3 ->
    // gemma3_text, llama4 -> llama4_text, mistral3 -> mistral), and the text rules do not plan vision
    // towers.
    static const std::set<std::string> not_text_models = {"gemma3",   "llama4",  "llama4_vision_model",
                                                          "mistral3", "pixtral", "siglip_vision_model"};
    if (name.front() != '_' && !not_text_models.count(name)) out.push_back(name);
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

std::string EpTpMesh(int64_t ep, int64_t tp) {
  return "dp=1,fsdp=1,ep=" + std::to_string(ep) + ",tp=" + std::to_string(tp) + ",sp=1";
}

std::vector<std::string> LogicalErrors(const std::shared_ptr<const Model>& model, const std::string& mesh,
                                       const std::string& layout = "easydel") {
  PlanOptions options;
  options.mesh.axes = mesh;
  options.tree.layout = layout;
  auto planned = PlanModel(model, options);
  EXPECT_TRUE(planned.ok()) << planned.status().ToString();
  std::vector<std::string> out;
  if (!planned.ok()) return out;
  for (const planner::Finding& f : planned->plan.findings) {
    if (f.code == planner::FindingCode::kLogicalIndivisible) out.push_back(f.message);
  }
  return out;
}

// The dims of a text model (BuiltInFamilies lists only those): a multimodal wrapper or a vision tower
// among them is a failure here.
std::optional<schemas::ModelDims> TextTowerDims(const Model& model) {
  auto dims = schemas::ModelDimsOf(model.resolved());
  EXPECT_TRUE(dims.ok()) << dims.status().ToString();
  if (!dims.ok()) return std::nullopt;
  EXPECT_TRUE(dims->pointer.empty() && dims->vocab > 0) << dims->model_type << " is not a text model";
  return *dims;
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
  const std::optional<schemas::ModelDims> dims = TextTowerDims(**loaded);
  ASSERT_TRUE(dims.has_value());
  const int64_t heads = dims->heads;
  const int64_t head_dim = dims->head_dim;
  ASSERT_GT(heads * head_dim, 0) << GetParam();
  if (GetParam() == "gpt2") {
    // EasyDeL's GPT-2 rules put tp on the input dim of c_attn (a Conv1D kernel stored [out, in]), so
    // tp never splits its heads: its counted dim is lm_head's vocabulary, which EasyDeL replicates
    // (VocabularyTheAxesDoNotDivideIsAWarningWithTheBytesAndThePaddedSize).
    return;
  }
  for (bool size_divides : {true, false}) {
    const int64_t tp = AxisNotDividing(heads, heads * head_dim, size_divides);
    ASSERT_GT(tp, 0);
    const std::vector<std::string> errors = LogicalErrors(*loaded, EpTpMesh(1, tp));
    EXPECT_TRUE(AnyMentions(errors, "attention heads"))
        << GetParam() << ": " << heads << " heads x " << head_dim << " on tp=" << tp
        << (size_divides ? " (the size divides)" : " (the size does not divide)");
  }
}

// Every MoE family: the experts on an ep that does not divide their count (the dim is the count).
TEST(LogicalDivisibilityTest, ExpertsEpDoesNotDivideAreAnErrorInEveryMoeFamily) {
  // EasyDeL never puts ep on these experts: phimoe keeps a list of per-expert modules its rules do not
  // match (replicated, rules/phimoe.yaml), dbrx fuses them into 2-D [E x I, H] tensors that the dense
  // presets shard (rules/dbrx.yaml).
  const std::set<std::string> ep_never_splits = {"dbrx", "phimoe"};
  std::vector<std::string> moe_families;
  for (const std::string& family : BuiltInFamilies()) {
    auto loaded = Model::Load(Environment::Real(), ConfigSource::Text("{\"model_type\": \"" + family + "\"}"), {});
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    const std::optional<schemas::ModelDims> dims = TextTowerDims(**loaded);
    const int64_t experts = dims ? dims->experts : 0;
    if (experts <= 1 || ep_never_splits.count(family)) continue;
    moe_families.push_back(family);
    const int64_t ep = AxisNotDividing(experts, experts, false);
    EXPECT_TRUE(AnyMentions(LogicalErrors(*loaded, EpTpMesh(ep, 1)), "experts"))
        << family << ": " << experts << " experts on ep=" << ep;
  }
  EXPECT_EQ(moe_families,
            (std::vector<std::string>{"deepseek_v2", "deepseek_v3", "glm4_moe", "gpt_oss", "granitemoe", "kimi_k2",
                                      "llama4_text", "mixtral", "qwen2_moe", "qwen3_moe", "qwen3_next"}));
}

// An HF tensor planned by the EasyDeL rules is [out, in] where the rules see [in, out]: its counted dim is
// its own, not the rule tensor's index (q_proj's heads are HF dim 0), and a data axis on the other dim is
// no count's business.
TEST(LogicalDivisibilityTest, HfLayoutChecksTheHfTensorsOwnDim) {
  PlanOptions options;
  options.tree.layout = "hf";
  options.mesh.axes = "tp=3";
  auto planned = PlanModel(LoadExample("llama-3.1-8b"), options);
  ASSERT_TRUE(planned.ok()) << planned.status().ToString();
  std::vector<std::string> errors;
  for (const planner::Finding& f : planned->plan.findings) {
    if (f.code == planner::FindingCode::kLogicalIndivisible) errors.push_back(f.message);
  }
  EXPECT_TRUE(AnyMentions(errors, "q_proj.weight: dim 0 holds 32 attention heads")) << ::testing::PrintToString(errors);
  EXPECT_TRUE(AnyMentions(errors, "o_proj.weight: dim 1 holds 32 attention heads")) << ::testing::PrintToString(errors);
  options.mesh.axes = "fsdp=8";  // 4 kv heads, but fsdp shards k_proj's hidden dim
  EXPECT_TRUE(LogicalErrors(LoadExample("qwen3-30b-a3b"), options.mesh.axes, "hf").empty());
}

// A vocabulary tp does not divide is replicated, and EasyDeL runs it so (eformer's correction): a
// warning with the bytes replicated and the padded size that shards it, not an error that stops `check`
// (issue 34: GPT-2's 50,257 entries on tp=4, Granite's 49,155 on tp=2).
TEST(LogicalDivisibilityTest, VocabularyTheAxesDoNotDivideIsAWarningWithTheBytesAndThePaddedSize) {
  struct Case {
    const char* example;
    const char* mesh;
    const char* padded;
  };
  for (const Case& c :
       {Case{"gpt2", "tp=4", "--set vocab_size=50260"}, Case{"granite-3.1-1b-a400m", "tp=2", "--set vocab_size=49156"},
        Case{"granite-3.3-8b", "tp=2", "--set vocab_size=49160"}}) {
    PlanOptions options;
    options.mesh.axes = c.mesh;
    auto planned = PlanModel(LoadExample(c.example), options);
    ASSERT_TRUE(planned.ok()) << planned.status().ToString();
    EXPECT_FALSE(planned->plan.HasErrors()) << c.example;
    const planner::Finding* vocab = nullptr;
    for (const planner::Finding& f : planned->plan.findings) {
      if (f.code == planner::FindingCode::kVocabReplicated) vocab = &f;
    }
    ASSERT_NE(vocab, nullptr) << c.example;
    EXPECT_EQ(vocab->severity, Severity::kWarning);
    EXPECT_NE(vocab->message.find("vocabulary entries (vocab_size)"), std::string::npos) << vocab->message;
    EXPECT_NE(vocab->message.find("per device where"), std::string::npos) << vocab->message;
    EXPECT_TRUE(AnyMentions(vocab->notes, c.padded)) << ::testing::PrintToString(vocab->notes);
  }
  // Heads stay errors: a head cannot be replicated away.
  EXPECT_TRUE(AnyMentions(LogicalErrors(LoadExample("llama-3.1-8b"), "tp=3"), "attention heads"));
}

INSTANTIATE_TEST_SUITE_P(BuiltInFamilies, LogicalDivisibilityTest, ::testing::ValuesIn(BuiltInFamilies()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) { return param_info.param; });

}  // namespace
}  // namespace easyplan::api
