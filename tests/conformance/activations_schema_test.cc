// ActivationsJsonSchemaTest (no corpus needed): every `activations --format json` golden output follows
// schemas/json/activations.schema.json, and the validator rejects what that schema forbids.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/document.h"
#include "core/json_parse.h"
#include "tests/test_util.h"
#include "tests/test_util_json_schema.h"

namespace easyplan {
namespace {

namespace fs = std::filesystem;

Json LoadSchema() {
  const fs::path path = fs::path(testing::SourceDir()) / "schemas/json/activations.schema.json";
  auto schema = ParseJsonDocument(testing::ReadTestFile(path.string()), path.string());
  EXPECT_TRUE(schema.ok()) << schema.status().ToString();
  return schema.ok() ? schema->root() : Json::object();
}

TEST(ActivationsJsonSchemaTest, EveryGoldenActivationsJsonOutputFollowsTheSchema) {
  const Json root = LoadSchema();
  EXPECT_EQ(root.value("$schema", ""), "https://json-schema.org/draft/2020-12/schema");
  int checked = 0, kernels = 0, ragged = 0;
  for (const std::string& output : testing::GoldenJsonOutputs("activations")) {
    auto doc = ParseJsonDocument(testing::ReadTestFile(output), output);
    ASSERT_TRUE(doc.ok()) << doc.status().ToString();
    std::vector<std::string> errors;
    testing::ValidateJsonSchema(root, root, doc->root(), "", errors);
    for (const std::string& error : errors) ADD_FAILURE() << output << ": " << error;
    ++checked;
    kernels += doc->root().value("kernel", Json()).is_object() ? 1 : 0;
    ragged += doc->root().contains("ragged_cache") ? 1 : 0;
  }
  EXPECT_GE(checked, 5) << "expected several `activations --format json` goldens under tests/golden/activations";
  EXPECT_GE(kernels, 2) << "expected goldens with a kernel report";
  EXPECT_GE(ragged, 1) << "expected a golden with --cache ragged";
}

TEST(ActivationsJsonSchemaTest, TheValidatorRejectsWhatTheSchemaForbids) {
  const Json root = LoadSchema();
  const fs::path golden = fs::path(testing::SourceDir()) / "tests/golden/activations/llama_decode_shapes_json.stdout";
  auto doc = ParseJsonDocument(testing::ReadTestFile(golden.string()), golden.string());
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  const Json good = doc->root();
  std::vector<std::string> errors;
  testing::ValidateJsonSchema(root, root, good, "", errors);
  ASSERT_TRUE(errors.empty()) << errors.front();
  for (const char* bad : {"/mode", "/attention/query/0", "/kernel/mode", "/kernel/specs/query/applied/0",
                          "/tensors/0/bytes", "/summary/errors"}) {
    Json broken = good;
    broken[Json::json_pointer(bad)] = Json::array({1});
    errors.clear();
    testing::ValidateJsonSchema(root, root, broken, "", errors);
    EXPECT_FALSE(errors.empty()) << bad;
  }
  for (const char* member : {"/unexpected", "/kernel/unexpected", "/kernel/specs/query/unexpected"}) {
    Json extra = good;
    extra[Json::json_pointer(member)] = 1;
    errors.clear();
    testing::ValidateJsonSchema(root, root, extra, "", errors);
    EXPECT_FALSE(errors.empty()) << member;
  }
  Json missing = good;
  missing.erase("kernel");
  errors.clear();
  testing::ValidateJsonSchema(root, root, missing, "", errors);
  EXPECT_FALSE(errors.empty());
}

}  // namespace
}  // namespace easyplan
