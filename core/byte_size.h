#ifndef EASYPLAN_CORE_BYTE_SIZE_H_
#define EASYPLAN_CORE_BYTE_SIZE_H_

// Memory sizes as people write them on a command line: "80GiB", "95 GB", "1.5TiB", "17179869184".

#include <cstdint>
#include <string_view>

#include "core/status.h"

namespace easyplan {

/// Parses a byte size: a non-negative decimal number, optionally with a fraction, then an optional unit:
/// B, KB/MB/GB/TB/PB (powers of 1000) or KiB/MiB/GiB/TiB/PiB (powers of 1024), case-insensitive, with
/// optional space. The result is rounded down to whole bytes. BadInput (naming `flag`) on anything
/// else, on a result above INT64_MAX, or on a bare "G" (ambiguous: say GB or GiB).
StatusOr<int64_t> ParseByteSize(std::string_view text, std::string_view flag);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_BYTE_SIZE_H_
