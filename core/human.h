#ifndef EASYPLAN_CORE_HUMAN_H_
#define EASYPLAN_CORE_HUMAN_H_

// Numbers for people, independent of the process locale (LC_ALL never changes easyplan's output).

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace easyplan {

/// 8030261248 -> "8,030,261,248"; negative numbers keep their sign.
std::string WithThousands(int64_t value);

/// Binary units with three significant figures, as accelerator memory is quoted and every text output
/// prints bytes: 85899345920 -> "80.0 GiB", 1023 -> "1023 B".
std::string HumanBytesBinary(int64_t bytes);

/// What FiniteFigure throws: a NaN or an infinity about to be printed. No input can cause one (inputs
/// are refused out of range where they are read, e.g. a hardware profile's rates), so it is a bug in
/// whatever computed the figure. Library code never catches it: main() and the Python module turn it
/// into an internal error (exit 3) with its message, where printing it would show `inf s` or `-nan %`.
class NonFiniteFigure : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// `value` when it is finite; otherwise throws NonFiniteFigure naming `what` (a JSON pointer or the
/// figure's name) and the value. The one guard every printed double passes: EmitJson, EmitYaml and
/// the text formatters of seconds and rates.
double FiniteFigure(double value, std::string_view what);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_HUMAN_H_
