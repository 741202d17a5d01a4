#ifndef EASYPLAN_API_ACTIVATIONS_TEXT_H_
#define EASYPLAN_API_ACTIVATIONS_TEXT_H_

// The terminal form of activation plans (`easyplan activations`) as a table, and the expert-mesh lines
// `plan` adds for MoE configs. The JSON forms live in api/activations_json.h.

#include <string>

#include "api/activations_json.h"

namespace easyplan::api {

std::string ActivationsToTable(const ActivationsView& view);

/// "expert mesh dp=1, ep=4, tp=2 (...)" and the expert kernel specs, one line each.
std::string ExpertTableLines(const planner::ExpertMesh& mesh, const planner::ExpertSpecs& specs);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_ACTIVATIONS_TEXT_H_
