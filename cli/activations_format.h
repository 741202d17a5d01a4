#ifndef EASYPLAN_CLI_ACTIVATIONS_FORMAT_H_
#define EASYPLAN_CLI_ACTIVATIONS_FORMAT_H_

// Rendering activation plans (`easyplan activations`) as a table, and the expert-mesh lines `plan`
// adds for MoE configs. The JSON forms live in api/activations_json.h.

#include <string>

#include "api/activations_json.h"

namespace easyplan::cli {

using api::ActivationsView;

std::string ActivationsToTable(const ActivationsView& view);

/// "expert mesh dp=1, ep=4, tp=2 (...)" and the expert kernel specs, one line each.
std::string ExpertTableLines(const planner::ExpertMesh& mesh, const planner::ExpertSpecs& specs);

}  // namespace easyplan::cli

#endif  // EASYPLAN_CLI_ACTIVATIONS_FORMAT_H_
