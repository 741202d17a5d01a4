#ifndef EASYPLAN_API_MEMORY_TEXT_H_
#define EASYPLAN_API_MEMORY_TEXT_H_

// The terminal form of `easyplan memory` (docs/MEMORY.md). The JSON form is MemoryToJsonText
// (api/memory_json.h).

#include <string>

#include "api/memory_pipeline.h"
#include "api/plan_inputs.h"

namespace easyplan::api {

/// The step's header, one row per set of devices with identical figures (the worst first), a pipelined
/// plan's stages, the worst device's breakdown, what EasyDeL's defaults assumed, and the verdict line.
/// `mode_given`: false when --mode took its default (train), which the header then says.
std::string MemoryTable(const planner::MemoryReport& report, const PlanInputs& inputs, const MemoryOptions& flags,
                        const std::string& budget_label, bool mode_given);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_MEMORY_TEXT_H_
