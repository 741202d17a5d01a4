#include "core/dtype.h"

#include <gtest/gtest.h>

namespace easyplan {
namespace {

TEST(DTypeTest, EasyDeLAliasesCanonicalise) {
  EXPECT_EQ(ParseDType("bf16"), DType::kBFloat16);
  EXPECT_EQ(ParseDType(" FP32 "), DType::kFloat32);
  EXPECT_EQ(ParseDType("torch.bfloat16"), DType::kBFloat16);
  EXPECT_EQ(ParseDType("fp8"), DType::kFloat8E5M2);
  EXPECT_EQ(ParseDType("fp8_e4m3"), DType::kFloat8E4M3);
  EXPECT_EQ(ParseDType("fp4"), DType::kFloat4E2M1FN);
  EXPECT_EQ(ParseDType("nvfp8"), DType::kFloat8E4M3);
}

TEST(DTypeTest, UnknownSpellingIsRejected) {
  EXPECT_EQ(ParseDType("bfloat61"), std::nullopt);
  EXPECT_EQ(ParseDType(""), std::nullopt);
}

TEST(DTypeTest, NamesAndWidthsRoundTrip) {
  for (std::string_view name : AllDTypeNames()) {
    auto dtype = ParseDType(name);
    ASSERT_TRUE(dtype.has_value()) << name;
    EXPECT_EQ(DTypeName(*dtype), name);
  }
  EXPECT_EQ(DTypeBits(DType::kBFloat16), 16);
  EXPECT_EQ(DTypeBits(DType::kInt4), 4);
  EXPECT_EQ(DTypeBits(DType::kComplex128), 128);
}

}  // namespace
}  // namespace easyplan
