// The `numeric_check:` block of family files: parsing, its errors at file:line, and its conditions.
#include "schemas/numeric_check_spec.h"

#include <gtest/gtest.h>

#include "schemas/schema.h"

namespace easyplan::schemas {
namespace {

constexpr char kFamily[] = R"yaml(model_type: toy
numeric_check:
  forward: moe
  mixtral_names: true
  tiny:
    - {key: num_hidden_layers, value: 2}
    - {key: hidden_size, size: hidden}
    - {key: layer_types, value: null, when: "layer_types != null"}
    - {key: mlp_only_layers, value: []}
)yaml";

StatusOr<FamilySchema> Parse(const std::string& text) { return ParseFamilySchema(text, "toy.yaml"); }

TEST(NumericCheckSpecTest, ParsesTheBlockOfAFamilyFile) {
  auto family = Parse(kFamily);
  ASSERT_TRUE(family.ok()) << family.status().ToString();
  ASSERT_TRUE(family->numeric_check.has_value());
  const NumericCheckDecl& decl = *family->numeric_check;
  EXPECT_EQ(decl.forward, "moe");
  EXPECT_EQ(decl.forward_loc.ToString(), "toy.yaml:3:12");
  EXPECT_TRUE(decl.mixtral_names);
  EXPECT_FALSE(decl.norm_topk_prob.has_value());
  ASSERT_EQ(decl.tiny.size(), 4u);
  EXPECT_EQ(decl.tiny[0].setting.value, Json(2));
  EXPECT_EQ(decl.tiny[1].setting.size, "hidden");
  EXPECT_EQ(decl.tiny[1].setting.loc.line, 7);
  EXPECT_EQ(decl.tiny[2].setting.value, Json(nullptr));
  EXPECT_TRUE(decl.tiny[2].when.has_value());
  EXPECT_EQ(decl.tiny[3].setting.value, Json::array());
  EXPECT_FALSE(Parse("model_type: toy\n").value().numeric_check.has_value());
}

TEST(NumericCheckSpecTest, ConditionsAreEvaluatedOverTheFullConfig) {
  auto family = Parse(kFamily);
  ASSERT_TRUE(family.ok());
  auto without = NumericCheckFor(*family->numeric_check, Json::parse(R"({"layer_types": null})"));
  ASSERT_TRUE(without.ok());
  ASSERT_EQ(without->tiny.size(), 3u);
  EXPECT_EQ(without->tiny[2].key, "mlp_only_layers");
  auto with = NumericCheckFor(*family->numeric_check, Json::parse(R"({"layer_types": ["full_attention"]})"));
  ASSERT_TRUE(with.ok());
  ASSERT_EQ(with->tiny.size(), 4u);
  EXPECT_EQ(with->tiny[2].key, "layer_types");
  EXPECT_TRUE(with->mixtral_names);
}

TEST(NumericCheckSpecTest, ErrorsNameTheEntry) {
  auto both =
      Parse("model_type: toy\nnumeric_check:\n  forward: llama\n  tiny:\n    - {key: a, value: 1, size: hidden}\n");
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.status().diag().loc.ToString(), "toy.yaml:5:7");
  EXPECT_EQ(both.status().diag().message, "expected one of 'value' (a literal) or 'size' (a named tiny size) for 'a'");
  auto typo = Parse("model_type: toy\nnumeric_check:\n  forwrd: llama\n  tiny: []\n");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().diag().message, "unknown schema key 'forwrd' (did you mean 'forward'?)");
  auto no_list = Parse("model_type: toy\nnumeric_check:\n  forward: llama\n");
  ASSERT_FALSE(no_list.ok());
  EXPECT_EQ(no_list.status().diag().message, "expected 'tiny': the list of keys the tiny config sets");
  auto bad_when =
      Parse("model_type: toy\nnumeric_check:\n  forward: llama\n  tiny:\n    - {key: a, value: 1, when: \"x +\"}\n");
  ASSERT_FALSE(bad_when.ok());
  EXPECT_EQ(bad_when.status().diag().loc.line, 5);
}

}  // namespace
}  // namespace easyplan::schemas
