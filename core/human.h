#ifndef EASYPLAN_CORE_HUMAN_H_
#define EASYPLAN_CORE_HUMAN_H_

// Numbers for people, independent of the process locale (LC_ALL never changes easyplan's output).

#include <cstdint>
#include <string>

namespace easyplan {

/// 8030261248 -> "8,030,261,248"; negative numbers keep their sign.
std::string WithThousands(int64_t value);

/// Binary units with three significant figures, as accelerator memory is quoted and every text output
/// prints bytes: 85899345920 -> "80.0 GiB", 1023 -> "1023 B".
std::string HumanBytesBinary(int64_t bytes);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_HUMAN_H_
