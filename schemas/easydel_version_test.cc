#include "schemas/easydel_version.h"

#include <gtest/gtest.h>

#include "schemas/data_source.h"
#include "schemas/schema_set.h"

namespace easyplan::schemas {
namespace {

TEST(EasyDelVersionTest, BundledVersionsDefaultTo090a03b2AndKeepC14e25c9ByName) {
  SchemaSet schemas(DataSource::Embedded());
  auto versions = schemas.Versions();
  ASSERT_TRUE(versions.ok()) << versions.status().ToString();
  auto fallback = (*versions)->Find("");
  ASSERT_TRUE(fallback.ok());
  EXPECT_EQ((*fallback)->name, "090a03b2");
  EXPECT_EQ((*fallback)->rules, RuleSource::kGenerated);
  auto old = (*versions)->Find("c14e25c9");
  ASSERT_TRUE(old.ok());
  EXPECT_EQ((*old)->rules, RuleSource::kTables);
}

TEST(EasyDelVersionTest, UnknownVersionNamesTheFlagAndTheKnownOnes) {
  SchemaSet schemas(DataSource::Embedded());
  auto versions = schemas.Versions();
  ASSERT_TRUE(versions.ok());
  auto unknown = (*versions)->Find("c14e25c8", "easydel_version");
  ASSERT_FALSE(unknown.ok());
  const std::string text = unknown.status().ToString();
  EXPECT_NE(text.find("easydel_version"), std::string::npos) << text;
  EXPECT_NE(text.find("c14e25c9"), std::string::npos) << text;
}

// Tree templates and forward variants test `easydel_version == 'REV'` against the config plus the version.
TEST(EasyDelVersionTest, VersionScopeBindsTheVersionBesideTheConfig) {
  const Json scope = VersionScope(Json{{"model_type", "gpt_oss"}}, "c14e25c9");
  EXPECT_EQ(scope.value("easydel_version", std::string()), "c14e25c9");
  EXPECT_EQ(scope.value("model_type", std::string()), "gpt_oss");
  EXPECT_FALSE(VersionScope(Json{{"model_type", "gpt_oss"}}, "").contains("easydel_version"));
  EXPECT_TRUE(VersionScope(Json::array(), "c14e25c9").is_array());
}

}  // namespace
}  // namespace easyplan::schemas
