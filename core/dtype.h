#ifndef EASYPLAN_CORE_DTYPE_H_
#define EASYPLAN_CORE_DTYPE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace easyplan {

/// Element types of tensors and of EasyDeL's dtype attributes, named as jax.numpy names them.
enum class DType {
  kBool,
  kInt4,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt4,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kComplex64,
  kComplex128,
  kFloat8E4M3,
  kFloat8E4M3FN,
  kFloat8E4M3FNUZ,
  kFloat8E4M3B11FNUZ,
  kFloat8E5M2,
  kFloat8E5M2FNUZ,
  kFloat8E3M4,
  kFloat8E8M0FNU,
  kFloat4E2M1FN,
};

/// Canonical name: "bfloat16", "float8_e4m3fn", ...
std::string_view DTypeName(DType dtype);

/// Bits per element (4 for int4/float4 types).
int DTypeBits(DType dtype);

/// Parses a dtype spelling the way EasyDeL's `_coerce_dtype_spec` does: trims, lower-cases, drops a
/// leading "torch." or "jnp."/"np.", applies the aliases (bf16 -> bfloat16, fp32 -> float32, fp8 ->
/// float8_e5m2, fp4 -> float4_e2m1fn, ...) and accepts every canonical name. nullopt when unknown.
std::optional<DType> ParseDType(std::string_view text);

/// Every canonical name, in enum order (for did-you-mean and "expected one of" messages).
std::span<const std::string_view> AllDTypeNames();

}  // namespace easyplan

#endif  // EASYPLAN_CORE_DTYPE_H_
