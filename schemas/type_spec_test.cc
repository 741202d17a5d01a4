#include "schemas/type_spec.h"

#include <gtest/gtest.h>

namespace easyplan::schemas {
namespace {

std::optional<std::string> Check(const std::string& type, Json value) {
  auto spec = TypeSpec::Parse(type);
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return spec->Check(value);
}

TEST(TypeSpecTest, SizeRejectsZeroAndStrings) {
  EXPECT_EQ(Check("size", 4096), std::nullopt);
  EXPECT_EQ(Check("size", 0), "a positive integer");
  EXPECT_EQ(Check("size", "4096"), "a positive integer");
  EXPECT_EQ(Check("size", 4096.0), "a positive integer");
}

TEST(TypeSpecTest, NullableUnionOfIntAndIntList) {
  EXPECT_EQ(Check("int|list[int]?", nullptr), std::nullopt);
  EXPECT_EQ(Check("int|list[int]?", Json({128001, 128009})), std::nullopt);
  EXPECT_EQ(Check("int|list[int]?", "x"), "an integer or a list of (an integer), or null");
}

TEST(TypeSpecTest, NumberAcceptsIntegersForFloatFields) { EXPECT_EQ(Check("number", 1000000), std::nullopt); }

TEST(TypeSpecTest, DTypeCanonicalisesAliases) {
  auto spec = TypeSpec::Parse("dtype");
  Json value = "bf16";
  EXPECT_EQ(spec->Check(value), std::nullopt);
  EXPECT_EQ(value, "bfloat16");
  value = "torch.float16";
  EXPECT_EQ(spec->Check(value), std::nullopt);
  EXPECT_EQ(value, "float16");
  value = "bfloat61";
  EXPECT_EQ(spec->Check(value), "a dtype name");
}

TEST(TypeSpecTest, AxisAcceptsNameListOrNull) {
  EXPECT_EQ(Check("axis", "tp"), std::nullopt);
  EXPECT_EQ(Check("axis", Json({"fsdp", "dp"})), std::nullopt);
  EXPECT_EQ(Check("axis", nullptr), std::nullopt);
  EXPECT_EQ(Check("axis", 3), "a mesh axis name, a list of names, or null");
}

TEST(TypeSpecTest, UnknownTypeNameIsASchemaError) {
  auto spec = TypeSpec::Parse("sise");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().diag().message, "invalid type 'sise': unknown type name 'sise'");
}

}  // namespace
}  // namespace easyplan::schemas
