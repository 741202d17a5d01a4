#ifndef EASYPLAN_API_ACTIVATIONS_JSON_H_
#define EASYPLAN_API_ACTIVATIONS_JSON_H_

// The JSON of `easyplan activations` (schemas/json/activations.schema.json), shared with the Python
// module, and the expert-mesh members `plan --format json` adds for MoE configs. Specs are JSON as in
// `plan`: per entry null, "axis" or ["a", "b"].

#include <string>

#include "planner/activations.h"
#include "planner/expert_mesh.h"

namespace easyplan::api {

struct ActivationsView {
  const planner::ActivationPlan* plan = nullptr;
  std::string model_type;
  std::string mesh_source;
  std::string easydel_version;  ///< the EasyDeL version the specs describe
};

std::string ActivationsToJsonText(const ActivationsView& view);

/// `"expert_mesh": {"dp": 1, "ep": 4, "tp": 2},\n  "experts": {...},\n` (two members of a JSON object at
/// indent 2, each line ending ",\n").
std::string ExpertJsonMembers(const planner::ExpertMesh& mesh, const planner::ExpertSpecs& specs);

/// "query.shape[1]": the dimension of the query a kernel's mode is told by, as the JSON and the table
/// both write it.
std::string KernelModeTest(const planner::KernelReport& kernel);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_ACTIVATIONS_JSON_H_
