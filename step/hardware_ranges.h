#ifndef EASYPLAN_STEP_HARDWARE_RANGES_H_
#define EASYPLAN_STEP_HARDWARE_RANGES_H_

// The plausible range of every number a hardware profile holds (schemas/hardware/NAME.yaml,
// docs/COST.md#hardware-profiles): each bound lies within a factor of about 10 of the slowest or the
// fastest part that exists, and `basis` names those parts. The profile reader reads every number
// through this table, so a field the table lacks is a bug the reader reports (and the test of every
// field catches), and a new field inherits the check by declaring its range here. Within these ranges
// every figure the step-time model derives (a step, tokens/s, a collective's time) is finite.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace easyplan::step {

struct HardwareFieldRange {
  /// The field's JSON pointer in a profile, with "*" for a list index: "/fast/torus/*".
  std::string field;
  std::string_view unit;  ///< "FLOP per second", "bytes per second", "seconds", "bytes", "" (a count or fraction)
  bool integer = false;   ///< an integer (a count of chips, a tile dim), else a real number
  double min = 0, max = 0;
  std::string_view min_text, max_text;  ///< the bounds as messages spell them: "1e12 FLOP per second (1 TFLOP/s)"
  std::string_view basis;               ///< the parts the bounds come from (docs/RELIABILITY.md, "Limits")
};

/// Every field's range, in file order.
const std::vector<HardwareFieldRange>& HardwareFieldRanges();

/// The range of the field at `pointer` (list indices match "*"), or nullopt when the table lacks it.
std::optional<HardwareFieldRange> FindHardwareFieldRange(std::string_view pointer);

}  // namespace easyplan::step

#endif  // EASYPLAN_STEP_HARDWARE_RANGES_H_
