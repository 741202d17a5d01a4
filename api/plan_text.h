#ifndef EASYPLAN_API_PLAN_TEXT_H_
#define EASYPLAN_API_PLAN_TEXT_H_

// The terminal form of `plan`: every tensor's rule, spec, shard and bytes per device as a table, then
// the mesh, the per-device summary and the pipeline. The JSON form lives in api/plan_json.h.

#include <string>

#include "api/plan_json.h"

namespace easyplan::api {

std::string PlanToTable(const PlanView& view);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_PLAN_TEXT_H_
