#ifndef EASYPLAN_STEP_PRECISION_H_
#define EASYPLAN_STEP_PRECISION_H_

// The precision a step's projections multiply in (--precision): its names are --precision's choices
// (api/option_table.cc) and the "precision" and "mfu_peak" fields of cost's JSON, so they are written
// once, here. Attention's matmuls stay bf16 either way (docs/COST.md).

#include <optional>
#include <string_view>

namespace easyplan::step {

enum class Precision { kBf16, kFp8 };
inline constexpr Precision kPrecisions[] = {Precision::kBf16, Precision::kFp8};

/// "bf16" or "fp8".
constexpr std::string_view PrecisionName(Precision precision) { return precision == Precision::kFp8 ? "fp8" : "bf16"; }

inline std::optional<Precision> ParsePrecision(std::string_view text) {
  for (const Precision precision : kPrecisions) {
    if (PrecisionName(precision) == text) return precision;
  }
  return std::nullopt;
}

}  // namespace easyplan::step

#endif  // EASYPLAN_STEP_PRECISION_H_
