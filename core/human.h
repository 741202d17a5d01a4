#ifndef EASYPLAN_CORE_HUMAN_H_
#define EASYPLAN_CORE_HUMAN_H_

// Numbers for people, independent of the process locale (LC_ALL never changes easyplan's output).

#include <cstdint>
#include <string>

namespace easyplan {

/// 8030261248 -> "8,030,261,248"; negative numbers keep their sign.
std::string WithThousands(int64_t value);

/// Decimal (SI) units with three significant figures, as storage and model cards quote them:
/// 999 -> "999 B", 16060522496 -> "16.1 GB", 1.5e12 -> "1.50 TB".
std::string HumanBytes(int64_t bytes);

/// Binary units, as accelerator memory is quoted: 85899345920 -> "80.0 GiB".
std::string HumanBytesBinary(int64_t bytes);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_HUMAN_H_
