#ifndef EASYPLAN_API_MEMORY_JSON_H_
#define EASYPLAN_API_MEMORY_JSON_H_

// The JSON of `easyplan memory`: the mode, every device's bytes by category, the worst device, the
// budget and the verdict. Shared with the Python module.

#include <string>
#include <vector>

#include "core/json.h"
#include "planner/findings.h"
#include "planner/memory.h"

namespace easyplan::api {

/// What memory's and cost's JSON say of the old key "memory_per_device", which they still write beside
/// "budget_per_device" (issue 46: it always held the budget, not the memory used).
inline constexpr const char* kMemoryPerDeviceRenamed =
    "renamed budget_per_device: it is the budget of one device, not its memory; this key will be removed";

/// One device's bytes by category, as memory's "worst" writes it: {"id", "params", ..., "total"}.
Json DeviceMemoryToJson(const planner::DeviceMemory& device);

/// `hardware`: the --hardware whose HBM is the budget ("tpu-v5p" or a file), written as "hardware"
/// after "budget_per_device"; "" writes no such key (the budget came from --max-memory or a
/// memory-only accelerator of the hardware catalogue).
/// `findings`: the plan's; when one is an error, "ok": false and the findings follow the figures.
/// `easydel_version`: the EasyDeL version described, written after "mode"; "" writes no such key.
std::string MemoryToJsonText(const planner::MemoryReport& report, const std::string& hardware = "",
                             const std::vector<planner::Finding>* findings = nullptr,
                             const std::string& easydel_version = "");

}  // namespace easyplan::api

#endif  // EASYPLAN_API_MEMORY_JSON_H_
