// The config keys each canonical dim is read from are data (schemas/dims.yaml, a family's `dims:`):
// which key counts, what a family may name, and what the loader refuses.
#include "schemas/dim_keys.h"

#include <gtest/gtest.h>

#include "core/yaml_parse.h"
#include "schemas/model_dims.h"
#include "schemas/schema.h"

namespace easyplan::schemas {
namespace {

const DimKeys& Shared() {
  auto shared = BuiltinDimKeys();
  EXPECT_TRUE(shared.ok()) << shared.status().ToString();
  return **shared;
}

// The keys of a family file's `dims:` over the shared ones, for the top-level config object.
DimKeysByObject KeysOfFamily(const std::string& yaml) {
  auto family = ParseFamilySchema(yaml, "schemas/families/toy.yaml");
  EXPECT_TRUE(family.ok()) << family.status().ToString();
  return {{"", WithOverrides(Shared(), {&family->dim_keys})}};
}

StatusOr<DimKeys> ParseTable(const std::string& yaml) {
  auto doc = ParseYamlDocument(yaml, "schemas/dims.yaml");
  EXPECT_TRUE(doc.ok()) << doc.status().ToString();
  return ParseDimKeys(*doc);
}

TEST(DimKeysTest, TheSharedTableKeepsTransformersSpellingsInOrder) {
  EXPECT_EQ(Shared().Keys(Dim::kExperts),
            (std::vector<std::string>{"n_routed_experts", "num_local_experts", "num_experts"}));
  EXPECT_EQ(Shared().Keys(Dim::kNormEps),
            (std::vector<std::string>{"rms_norm_eps", "layer_norm_epsilon", "layer_norm_eps"}));
  EXPECT_EQ(Shared().Keys(Dim::kKvHeads), (std::vector<std::string>{"num_kv_heads", "num_key_value_heads"}));
  EXPECT_EQ(Shared().Default(Dim::kNormEps), Json(1e-6));
  EXPECT_EQ(Shared().Default(Dim::kUseSlidingWindow), Json(true));
  EXPECT_TRUE(Shared().Default(Dim::kHidden).is_null());
}

TEST(DimKeysTest, EveryDimHasANameThatNamesItBack) {
  for (size_t i = 0; i < kDimCount; ++i) {
    const Dim dim = static_cast<Dim>(i);
    EXPECT_EQ(DimNamed(DimName(dim)), dim) << DimName(dim);
    EXPECT_FALSE(Shared().Keys(dim).empty()) << DimName(dim);
  }
}

TEST(DimKeysTest, TheFirstSharedSpellingPresentWins) {
  // A size: the first positive one (n_routed_experts 0 does not count), every present one checked.
  auto experts = ModelDimsOf(Json::parse(R"({"n_routed_experts": 0, "num_local_experts": 8, "num_experts": 4})"));
  ASSERT_TRUE(experts.ok()) << experts.status().ToString();
  EXPECT_EQ(experts->experts, 8);
  // A number: the first present one, null skipped.
  auto eps = ModelDimsOf(Json::parse(R"({"rms_norm_eps": null, "layer_norm_epsilon": 1e-5, "layer_norm_eps": 1e-3})"));
  ASSERT_TRUE(eps.ok()) << eps.status().ToString();
  EXPECT_DOUBLE_EQ(eps->norm_eps, 1e-5);
  auto fallback = ModelDimsOf(Json::parse(R"({"hidden_size": 8})"));
  ASSERT_TRUE(fallback.ok());
  EXPECT_DOUBLE_EQ(fallback->norm_eps, 1e-6);  // dims.yaml's default
}

TEST(DimKeysTest, AWrongTypeNamesThePointerOfTheKeyFound) {
  auto dims = ModelDimsOf(Json::parse(
      R"({"text_config": {"num_attention_heads": 4, "num_local_experts": "8"}, "num_attention_heads": null})"));
  ASSERT_FALSE(dims.ok());
  EXPECT_EQ(dims.status().diag().loc.pointer, "/text_config/num_local_experts");
  EXPECT_EQ(dims.status().diag().message, "expected an integer, found \"8\" (string)");
  // A later key of a size is checked too, though an earlier one already counts.
  auto later = ModelDimsOf(Json::parse(R"({"n_routed_experts": 8, "num_experts": [8]})"));
  ASSERT_FALSE(later.ok());
  EXPECT_EQ(later.status().diag().loc.pointer, "/num_experts");
}

TEST(DimKeysTest, AFamilyNamingItsOwnExpertKeyIsRead) {
  const DimKeysByObject keys = KeysOfFamily("model_type: toy\ndims:\n  experts: [moe_num_experts]\n");
  const Json config = Json::parse(R"({"moe_num_experts": 16, "num_experts": 2})");
  auto dims = ModelDimsOf(config, Json::object(), keys);
  ASSERT_TRUE(dims.ok()) << dims.status().ToString();
  EXPECT_EQ(dims->experts, 16);  // its key, and not the shared num_experts
  EXPECT_EQ(ModelDimsOf(config)->experts, 2);
  auto wrong = ModelDimsOf(Json::parse(R"({"moe_num_experts": "16"})"), Json::object(), keys);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().diag().loc.pointer, "/moe_num_experts");
}

TEST(DimKeysTest, AFamilysOwnKeysWinOverThoseItInherits) {
  auto parent = ParseFamilySchema("model_type: parent\ndims: {experts: [a], top_k: [k]}\n", "parent.yaml");
  auto child = ParseFamilySchema("model_type: child\ndims: {experts: [b]}\n", "child.yaml");
  ASSERT_TRUE(parent.ok() && child.ok());
  const DimKeys keys = WithOverrides(Shared(), {&child->dim_keys, &parent->dim_keys});
  EXPECT_EQ(keys.Keys(Dim::kExperts), std::vector<std::string>{"b"});
  EXPECT_EQ(keys.Keys(Dim::kTopK), std::vector<std::string>{"k"});
  EXPECT_EQ(keys.Keys(Dim::kHidden), Shared().Keys(Dim::kHidden));
}

TEST(DimKeysTest, GeometryWinsOverTheConfigUnderTheFamilysKey) {
  const DimKeysByObject keys = KeysOfFamily("model_type: toy\ndims: {experts: [moe_num_experts]}\n");
  auto dims =
      ModelDimsOf(Json::parse(R"({"moe_num_experts": 2})"), Json::parse(R"({"": {"moe_num_experts": 16}})"), keys);
  ASSERT_TRUE(dims.ok()) << dims.status().ToString();
  EXPECT_EQ(dims->experts, 16);
}

TEST(DimKeysTest, AnUnknownDimInAFamilyFileIsRefusedWithTheFileAndKey) {
  auto family =
      ParseFamilySchema("model_type: toy\ndims:\n  expert: [num_local_experts]\n", "schemas/families/toy.yaml");
  ASSERT_FALSE(family.ok());
  const Status status = family.status();
  const Diag& diag = status.diag();
  EXPECT_EQ(diag.loc.file, "schemas/families/toy.yaml");
  EXPECT_EQ(diag.loc.pointer, "/dims/expert");
  EXPECT_EQ(diag.loc.line, 3);
  EXPECT_EQ(diag.message, "unknown dim 'expert' (did you mean 'experts'?)");
}

TEST(DimKeysTest, AFamilysKeysMustBeANonEmptyListOfNames) {
  auto bare = ParseFamilySchema("model_type: toy\ndims: {experts: num_local_experts}\n", "toy.yaml");
  ASSERT_FALSE(bare.ok());
  EXPECT_EQ(bare.status().diag().loc.pointer, "/dims/experts");
  EXPECT_EQ(bare.status().diag().message, "expected a non-empty list of config keys, found \"num_local_experts\"");
  auto number = ParseFamilySchema("model_type: toy\ndims: {experts: [8]}\n", "toy.yaml");
  ASSERT_FALSE(number.ok());
  EXPECT_EQ(number.status().diag().loc.pointer, "/dims/experts/0");
  EXPECT_EQ(number.status().diag().message, "expected a config key, found 8");
}

TEST(DimKeysTest, TheSharedTableMustNameEveryDimWithTheRightDefaults) {
  auto missing = ParseTable("dims:\n  hidden: {keys: [hidden_size]}\n");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().diag().loc.file, "schemas/dims.yaml");
  EXPECT_EQ(missing.status().diag().message, "missing dim 'model_type': every canonical dim names its keys");
  auto size_default = ParseTable("dims:\n  hidden: {keys: [hidden_size], default: 4}\n");
  ASSERT_FALSE(size_default.ok());
  EXPECT_EQ(size_default.status().diag().loc.pointer, "/dims/hidden/default");
  auto bool_default = ParseTable("dims:\n  tied_embeddings: {keys: [tie_word_embeddings], default: 1}\n");
  ASSERT_FALSE(bool_default.ok());
  EXPECT_EQ(bool_default.status().diag().message, "expected true or false, found 1");
  auto no_default = ParseTable("dims:\n  norm_eps: {keys: [rms_norm_eps]}\n");
  ASSERT_FALSE(no_default.ok());
  EXPECT_EQ(no_default.status().diag().message, "missing required key 'default'");
  auto typo = ParseTable("dims:\n  hiden: {keys: [hidden_size]}\n");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().diag().message, "unknown dim 'hiden' (did you mean 'hidden'?)");
}

}  // namespace
}  // namespace easyplan::schemas
