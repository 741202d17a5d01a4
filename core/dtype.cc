#include "core/dtype.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace easyplan {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  int bits;
};

constexpr std::array<DTypeInfo, 26> kDTypes = {{
    {DType::kBool, "bool", 8},
    {DType::kInt4, "int4", 4},
    {DType::kInt8, "int8", 8},
    {DType::kInt16, "int16", 16},
    {DType::kInt32, "int32", 32},
    {DType::kInt64, "int64", 64},
    {DType::kUInt4, "uint4", 4},
    {DType::kUInt8, "uint8", 8},
    {DType::kUInt16, "uint16", 16},
    {DType::kUInt32, "uint32", 32},
    {DType::kUInt64, "uint64", 64},
    {DType::kFloat16, "float16", 16},
    {DType::kBFloat16, "bfloat16", 16},
    {DType::kFloat32, "float32", 32},
    {DType::kFloat64, "float64", 64},
    {DType::kComplex64, "complex64", 64},
    {DType::kComplex128, "complex128", 128},
    {DType::kFloat8E4M3, "float8_e4m3", 8},
    {DType::kFloat8E4M3FN, "float8_e4m3fn", 8},
    {DType::kFloat8E4M3FNUZ, "float8_e4m3fnuz", 8},
    {DType::kFloat8E4M3B11FNUZ, "float8_e4m3b11fnuz", 8},
    {DType::kFloat8E5M2, "float8_e5m2", 8},
    {DType::kFloat8E5M2FNUZ, "float8_e5m2fnuz", 8},
    {DType::kFloat8E3M4, "float8_e3m4", 8},
    {DType::kFloat8E8M0FNU, "float8_e8m0fnu", 8},
    {DType::kFloat4E2M1FN, "float4_e2m1fn", 4},
}};

// EasyDeL's alias table (_coerce_dtype_spec, easydel/infra/base_config.py) plus the numpy/torch short names users
// write.
constexpr std::array<std::pair<std::string_view, std::string_view>, 25> kAliases = {{
    {"bf16", "bfloat16"},
    {"fp16", "float16"},
    {"f16", "float16"},
    {"half", "float16"},
    {"fp32", "float32"},
    {"f32", "float32"},
    {"float", "float64"},
    {"fp64", "float64"},
    {"f64", "float64"},
    {"double", "float64"},
    {"nvfp8", "float8_e4m3"},
    {"mxfp8", "float8_e5m2"},
    {"fp8", "float8_e5m2"},
    {"float8", "float8_e5m2"},
    {"fp8_e4m3", "float8_e4m3"},
    {"fp8_e4m3fn", "float8_e4m3fn"},
    {"fp8_e4m3fnuz", "float8_e4m3fnuz"},
    {"fp8_e4m3b11fnuz", "float8_e4m3b11fnuz"},
    {"fp8_e3m4", "float8_e3m4"},
    {"fp8_e8m0fnu", "float8_e8m0fnu"},
    {"mxfp4", "float4_e2m1fn"},
    {"fp4", "float4_e2m1fn"},
    {"float4", "float4_e2m1fn"},
    {"int", "int64"},
    {"long", "int64"},
}};

constexpr std::array<std::string_view, 26> kNames = [] {
  std::array<std::string_view, 26> names{};
  for (size_t i = 0; i < kDTypes.size(); ++i) names[i] = kDTypes[i].name;
  return names;
}();

const DTypeInfo& Info(DType dtype) { return kDTypes[static_cast<size_t>(dtype)]; }

}  // namespace

std::string_view DTypeName(DType dtype) { return Info(dtype).name; }

int DTypeBits(DType dtype) { return Info(dtype).bits; }

std::optional<DType> ParseDType(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  std::string lowered(text);
  std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (std::string_view prefix : {"torch.", "jnp.", "np.", "jax.numpy.", "numpy."}) {
    if (std::string_view(lowered).starts_with(prefix)) {
      lowered.erase(0, prefix.size());
      break;
    }
  }
  for (const auto& [alias, name] : kAliases) {
    if (lowered == alias) lowered = std::string(name);
  }
  for (const DTypeInfo& info : kDTypes) {
    if (lowered == info.name) return info.dtype;
  }
  return std::nullopt;
}

std::span<const std::string_view> AllDTypeNames() { return kNames; }

}  // namespace easyplan
