#ifndef EASYPLAN_API_MEMORY_JSON_H_
#define EASYPLAN_API_MEMORY_JSON_H_

// The JSON of `easyplan memory`: the mode, every device's bytes by category, the worst device, the
// budget and the verdict. Shared with the Python module.

#include <string>

#include "planner/memory.h"

namespace easyplan::api {

std::string MemoryToJsonText(const planner::MemoryReport& report);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_MEMORY_JSON_H_
