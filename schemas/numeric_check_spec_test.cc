// The `numeric_check:` block of family files: parsing, its errors at file:line, and its conditions.
#include "schemas/numeric_check_spec.h"

#include <gtest/gtest.h>

#include "core/document.h"
#include "core/json_parse.h"
#include "core/yaml_parse.h"
#include "schemas/data_source.h"
#include "schemas/schema.h"
#include "schemas/schema_set.h"

namespace easyplan::schemas {
namespace {

constexpr char kFamily[] = R"yaml(model_type: toy
numeric_check:
  forward:
    extends: moe
    moe: {gate: experts/w1}
    variants:
      - {when: "layer_types != null", set: {norm: layer}}
  tiny:
    - {key: num_hidden_layers, value: 2}
    - {key: hidden_size, size: hidden}
    - {key: layer_types, value: null, when: "layer_types != null"}
    - {key: mlp_only_layers, value: []}
)yaml";

// The block of a family file, as SchemaSet::NumericCheck reads it (the rest of the file must parse too).
StatusOr<std::optional<NumericCheckDecl>> ParseCheckDecl(const std::string& text) {
  EP_RETURN_IF_ERROR(ParseFamilySchema(text, "toy.yaml").status());
  EP_ASSIGN_OR_RETURN(Document doc, ParseYamlDocument(text, "toy.yaml"));
  auto block = doc.root().find("numeric_check");
  if (block == doc.root().end()) return std::optional<NumericCheckDecl>();
  EP_ASSIGN_OR_RETURN(const Document forwards, DataSource::Embedded().ReadDocument("schemas/forwards.yaml"));
  EP_ASSIGN_OR_RETURN(NumericCheckDecl decl, ParseNumericCheck(doc, *block, "/numeric_check", forwards));
  return std::optional<NumericCheckDecl>(std::move(decl));
}

TEST(NumericCheckSpecTest, ParsesTheBlockOfAFamilyFile) {
  auto parsed = ParseCheckDecl(kFamily);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_TRUE(parsed->has_value());
  const NumericCheckDecl& decl = **parsed;
  EXPECT_EQ(decl.forward, "moe");
  EXPECT_EQ(decl.forward_loc.line, 4);
  // The override over moe's structure, which keeps what it extends (llama's attention).
  EXPECT_EQ(decl.structure.moe.gate, "experts/w1");
  EXPECT_EQ(decl.structure.moe.up, "experts/up_proj");
  EXPECT_EQ(decl.structure.attention.q, "self_attn/q_proj");
  EXPECT_FALSE(decl.structure.moe.norm_topk_prob.has_value());
  ASSERT_EQ(decl.variants.size(), 1u);
  EXPECT_EQ(decl.variants[0].structure.norm, NormKind::kLayer);
  EXPECT_EQ(decl.variants[0].structure.moe.gate, "experts/w1");
  ASSERT_EQ(decl.tiny.size(), 4u);
  EXPECT_EQ(decl.tiny[0].setting.value, Json(2));
  EXPECT_EQ(decl.tiny[1].setting.size, "hidden");
  EXPECT_EQ(decl.tiny[1].setting.loc.line, 10);
  EXPECT_EQ(decl.tiny[2].setting.value, Json(nullptr));
  EXPECT_TRUE(decl.tiny[2].when.has_value());
  EXPECT_EQ(decl.tiny[3].setting.value, Json::array());
  EXPECT_FALSE(ParseCheckDecl("model_type: toy\n").value().has_value());
}

TEST(NumericCheckSpecTest, TopKKeyDefaultsToNumExpertsPerTokAndReachesTheSpec) {
  auto parsed = ParseCheckDecl(kFamily);
  ASSERT_TRUE(parsed.ok() && parsed->has_value());
  EXPECT_EQ((*parsed)->top_k_key, "num_experts_per_tok");
  std::string nested = kFamily;
  nested.replace(nested.find("  tiny:"), 0, "  top_k_key: ffn_config.moe_top_k\n");
  auto named = ParseCheckDecl(nested);
  ASSERT_TRUE(named.ok() && named->has_value()) << named.status().ToString();
  EXPECT_EQ((*named)->top_k_key, "ffn_config.moe_top_k");
  auto spec = NumericCheckFor(**named, Json::parse(R"({"layer_types": null})"));
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->top_k_key, "ffn_config.moe_top_k");
  std::string misspelt = kFamily;
  misspelt.replace(misspelt.find("  tiny:"), 0, "  topk_key: x\n");
  auto error = ParseCheckDecl(misspelt);
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.status().ToString().find("top_k_key"), std::string::npos) << error.status().ToString();
}

TEST(NumericCheckSpecTest, ConditionsAreEvaluatedOverTheFullConfig) {
  auto parsed = ParseCheckDecl(kFamily);
  ASSERT_TRUE(parsed.ok() && parsed->has_value());
  auto without = NumericCheckFor(**parsed, Json::parse(R"({"layer_types": null})"));
  ASSERT_TRUE(without.ok());
  ASSERT_EQ(without->tiny.size(), 3u);
  EXPECT_EQ(without->tiny[2].key, "mlp_only_layers");
  EXPECT_EQ(without->structure.norm, NormKind::kRms);
  auto with = NumericCheckFor(**parsed, Json::parse(R"({"layer_types": ["full_attention"]})"));
  ASSERT_TRUE(with.ok());
  ASSERT_EQ(with->tiny.size(), 4u);
  EXPECT_EQ(with->tiny[2].key, "layer_types");
  EXPECT_EQ(with->structure.norm, NormKind::kLayer);  // the variant whose condition holds
}

TEST(NumericCheckSpecTest, ErrorsNameTheEntry) {
  auto both = ParseCheckDecl(
      "model_type: toy\nnumeric_check:\n  forward: llama\n  tiny:\n    - {key: a, value: 1, size: hidden}\n");
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.status().diag().loc.ToString(), "toy.yaml:5:7");
  EXPECT_EQ(both.status().diag().message, "expected one of 'value' (a literal) or 'size' (a named tiny size) for 'a'");
  auto typo = ParseCheckDecl("model_type: toy\nnumeric_check:\n  forwrd: llama\n  tiny: []\n");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().diag().message, "unknown schema key 'forwrd' (did you mean 'forward'?)");
  auto no_list = ParseCheckDecl("model_type: toy\nnumeric_check:\n  forward: llama\n");
  ASSERT_FALSE(no_list.ok());
  EXPECT_EQ(no_list.status().diag().message, "expected 'tiny': the list of keys the tiny config sets");
  auto bad_when = ParseCheckDecl(
      "model_type: toy\nnumeric_check:\n  forward: llama\n  tiny:\n    - {key: a, value: 1, when: \"x +\"}\n");
  ASSERT_FALSE(bad_when.ok());
  EXPECT_EQ(bad_when.status().diag().loc.line, 5);
}

TEST(NumericCheckSpecTest, ForwardErrorsNameTheFileLineAndClosestName) {
  auto name = ParseCheckDecl("model_type: toy\nnumeric_check:\n  forward: lama\n  tiny: []\n");
  ASSERT_FALSE(name.ok());
  EXPECT_EQ(name.status().diag().loc.ToString(), "toy.yaml:3:12");
  EXPECT_EQ(name.status().diag().message,
            "forward 'lama' is not a structure of schemas/forwards.yaml (did you mean 'llama'?)");
  auto kind = ParseCheckDecl("model_type: toy\nnumeric_check:\n  forward: {extends: llama, norm: rsm}\n  tiny: []\n");
  ASSERT_FALSE(kind.ok());
  EXPECT_EQ(kind.status().diag().loc.line, 3);
  EXPECT_EQ(kind.status().diag().message, "'norm' is \"rsm\", not a known kind (did you mean 'rms'?)");
  EXPECT_EQ(kind.status().diag().notes, (std::vector<std::string>{R"(expected one of "rms", "layer")"}));
  auto key = ParseCheckDecl(
      "model_type: toy\nnumeric_check:\n  forward: {extends: llama, mlp: {activaton: gelu}}\n  tiny: []\n");
  ASSERT_FALSE(key.ok());
  EXPECT_EQ(key.status().diag().message, "unknown schema key 'activaton' (did you mean 'activation'?)");
  auto no_base = ParseCheckDecl("model_type: toy\nnumeric_check:\n  forward: {norm: layer}\n  tiny: []\n");
  ASSERT_FALSE(no_base.ok());
  EXPECT_EQ(no_base.status().diag().message, "missing required key 'extends'");
}

// The MoE mechanisms beyond stacked experts on the fused path: how experts are stored and run, flattened
// tokens, the softmax group-limited and sparsemixer routers; a misspelt kind offers the closest.
TEST(NumericCheckSpecTest, ParsesTheExpertLayoutsExecutionAndRouters) {
  auto parsed = ParseCheckDecl(R"yaml(model_type: toy
numeric_check:
  forward:
    extends: mixtral
    moe: {layout: per_expert, execution: expert_loop, flatten_tokens: true, scoring: sparsemixer,
          gate: "experts/{e}/w1"}
    variants:
      - {when: "layer_types != null", set: {moe: {layout: experts_last, scoring: softmax_group_limited}}}
  tiny: []
)yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const ForwardStructure::Moe& moe = (*parsed)->structure.moe;
  EXPECT_EQ(moe.layout, ExpertsLayout::kPerExpert);
  EXPECT_EQ(moe.execution, ExpertsExecution::kExpertLoop);
  EXPECT_TRUE(moe.flatten_tokens);
  EXPECT_EQ(moe.router_kind, RouterKind::kSparseMixer);
  EXPECT_EQ(moe.gate, "experts/{e}/w1");
  EXPECT_EQ(moe.up, "experts/w3");  // mixtral's, kept
  const ForwardStructure::Moe& variant = (*parsed)->variants[0].structure.moe;
  EXPECT_EQ(variant.layout, ExpertsLayout::kExpertsLast);
  EXPECT_EQ(variant.execution, ExpertsExecution::kExpertLoop);
  EXPECT_EQ(variant.router_kind, RouterKind::kSoftmaxGroupLimited);
  // The defaults of a structure that says nothing: stacked experts on the fused path, tokens as they are.
  auto forwards = DataSource::Embedded().ReadDocument("schemas/forwards.yaml");
  ASSERT_TRUE(forwards.ok());
  auto mixtral = NamedForwardStructure(*forwards, "mixtral", {});
  ASSERT_TRUE(mixtral.ok());
  EXPECT_EQ(mixtral->moe.layout, ExpertsLayout::kStacked);
  EXPECT_EQ(mixtral->moe.execution, ExpertsExecution::kFusedMoe);
  EXPECT_FALSE(mixtral->moe.flatten_tokens);

  auto layout = ParseCheckDecl(
      "model_type: toy\nnumeric_check:\n  forward: {extends: moe, moe: {layout: packd_rows}}\n  tiny: []\n");
  ASSERT_FALSE(layout.ok());
  EXPECT_EQ(layout.status().diag().message,
            "'layout' is \"packd_rows\", not a known kind (did you mean 'packed_rows'?)");
  EXPECT_EQ(layout.status().diag().notes,
            (std::vector<std::string>{R"(expected one of "stacked", "experts_last", "packed_rows", "per_expert")"}));
  auto execution = ParseCheckDecl(
      "model_type: toy\nnumeric_check:\n  forward: {extends: moe, moe: {execution: loop}}\n  tiny: []\n");
  ASSERT_FALSE(execution.ok());
  EXPECT_EQ(execution.status().diag().notes,
            (std::vector<std::string>{
                R"(expected one of "fused_moe", "expert_loop", "per_token_gather", "score_masked_loop")"}));
  auto flatten = ParseCheckDecl(
      "model_type: toy\nnumeric_check:\n  forward: {extends: moe, moe: {flatten_tokens: 1}}\n  tiny: []\n");
  ASSERT_FALSE(flatten.ok());
  EXPECT_EQ(flatten.status().diag().message, "expected true or false for 'flatten_tokens', found integer");
}

TEST(NumericCheckSpecTest, EveryNamedStructureResolvesWithItsNames) {
  auto forwards = DataSource::Embedded().ReadDocument("schemas/forwards.yaml");
  ASSERT_TRUE(forwards.ok());
  const std::vector<std::string> names = ForwardStructureNames(*forwards);
  EXPECT_GE(names.size(), 9u);
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    auto structure = NamedForwardStructure(*forwards, name, {});
    ASSERT_TRUE(structure.ok()) << structure.status().ToString();
    EXPECT_EQ(structure->name, name);
    EXPECT_FALSE(structure->embedding.empty());
    EXPECT_FALSE(structure->layers.empty());
    EXPECT_FALSE(structure->attention.o.empty());
  }
}

TEST(NumericCheckSpecTest, SchemaSetReadsTheBlockOfEmbeddedFamilies) {
  SchemaSet schemas(DataSource::Embedded());
  auto llama = schemas.NumericCheck("llama");
  ASSERT_TRUE(llama.ok()) << llama.status().ToString();
  ASSERT_NE(*llama, nullptr);
  EXPECT_EQ((*llama)->forward, "llama");
  EXPECT_EQ((*llama)->forward_loc.file, "schemas/families/llama.yaml");
  auto vision = schemas.NumericCheck("siglip_vision_model");  // a vision tower: no text forward pass
  ASSERT_TRUE(vision.ok());
  EXPECT_EQ(*vision, nullptr);
  auto unknown = schemas.NumericCheck("not_a_family");
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(*unknown, nullptr);
}

}  // namespace
}  // namespace easyplan::schemas
