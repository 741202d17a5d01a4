#ifndef EASYPLAN_CLI_ACTIVATIONS_FORMAT_H_
#define EASYPLAN_CLI_ACTIVATIONS_FORMAT_H_

// Rendering activation plans (`easyplan activations`) as a table or JSON, and the expert-mesh lines
// and JSON members that `plan` adds for MoE configs. Specs are JSON as in `plan`: per entry null, "axis"
// or ["a", "b"]. The JSON follows schemas/json/activations.schema.json.

#include <string>

#include "planner/activations.h"
#include "planner/expert_mesh.h"

namespace easyplan::cli {

struct ActivationsView {
  const planner::ActivationPlan* plan = nullptr;
  std::string model_type;
  std::string mesh_source;
};

std::string ActivationsToJsonText(const ActivationsView& view);
std::string ActivationsToTable(const ActivationsView& view);

/// `"expert_mesh": {"dp": 1, "ep": 4, "tp": 2},\n  "experts": {...},\n` (two members of a JSON object at
/// indent 2, each line ending ",\n").
std::string ExpertJsonMembers(const planner::ExpertMesh& mesh, const planner::ExpertSpecs& specs);

/// "expert mesh dp=1, ep=4, tp=2 (...)" and the expert kernel specs, one line each.
std::string ExpertTableLines(const planner::ExpertMesh& mesh, const planner::ExpertSpecs& specs);

}  // namespace easyplan::cli

#endif  // EASYPLAN_CLI_ACTIVATIONS_FORMAT_H_
