#include "core/human.h"

#include <fmt/format.h>

#include <array>
#include <cmath>

namespace easyplan {
namespace {

// Three significant figures: 1.23, 12.3, 123.
std::string ThreeFigures(double value) {
  if (value < 9.995) return fmt::format("{:.2f}", value);
  if (value < 99.95) return fmt::format("{:.1f}", value);
  return fmt::format("{:.0f}", value);
}

std::string Scaled(int64_t bytes, double base, const std::array<const char*, 7>& units) {
  if (bytes < 0) return "-" + Scaled(bytes == INT64_MIN ? INT64_MAX : -bytes, base, units);
  if (static_cast<double>(bytes) < base) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  // Move up while the rounded figure would reach the next unit (999.96 GB prints as 1.00 TB).
  while (unit + 1 < units.size() && value >= base * 0.9995) {
    value /= base;
    ++unit;
  }
  return ThreeFigures(value) + " " + units[unit];
}

}  // namespace

std::string WithThousands(int64_t value) {
  std::string digits = value == INT64_MIN ? "9223372036854775808" : std::to_string(value < 0 ? -value : value);
  std::string out;
  int count = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (count > 0 && count % 3 == 0) out.push_back(',');
    out.push_back(*it);
    ++count;
  }
  if (value < 0) out.push_back('-');
  return std::string(out.rbegin(), out.rend());
}

double FiniteFigure(double value, std::string_view what) {
  if (std::isfinite(value)) return value;
  throw NonFiniteFigure(fmt::format(
      "{} is {}: easyplan computed a figure that is not a finite number, which is a bug, not a fault of the input "
      "(please report the command line)",
      what.empty() ? std::string("a figure") : std::string(what),
      std::isnan(value) ? "NaN" : (value > 0 ? "inf" : "-inf")));
}

std::string HumanBytesBinary(int64_t bytes) {
  return Scaled(bytes, 1024.0, {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"});
}

}  // namespace easyplan
