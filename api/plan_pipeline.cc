#include "api/plan_pipeline.h"

#include "api/plan_json.h"

namespace easyplan::api {

StatusOr<PlanResult> PlanModel(const std::shared_ptr<const Model>& model, const PlanOptions& options,
                               const PlanViewOptions& view) {
  EP_ASSIGN_OR_RETURN(const Checked<PlanOptions> checked, Checked<PlanOptions>::Of(options));
  return PlanModel(model, checked, view);
}

StatusOr<PlanResult> PlanModel(const std::shared_ptr<const Model>& model, const Checked<PlanOptions>& options,
                               const PlanViewOptions& view) {
  EP_ASSIGN_OR_RETURN(PlanInputs inputs, PreparePlan(model, options));
  if (view.rank && (*view.rank < 0 || *view.rank >= inputs.mesh.NumDevices())) {
    return Status::BadInput({}, "--rank " + std::to_string(*view.rank) + " is not a device of the mesh: ids are 0.." +
                                    std::to_string(inputs.mesh.NumDevices() - 1) + " (" + inputs.mesh.ToString() + ")");
  }
  // The summary shows no per-tensor rows.
  EP_ASSIGN_OR_RETURN(planner::Plan plan, inputs.Build(/*keep_params=*/!view.summary));
  PlanResult result{std::move(inputs), std::move(plan), std::nullopt};
  EP_ASSIGN_OR_RETURN(result.experts, ExpertReportForPlan(result.inputs));
  return result;
}

PlanView ViewOfPlan(const PlanResult& result, const PlanViewOptions& view) {
  PlanView rendering{&result.plan, result.inputs.tree.get(), result.inputs.rules, view.rank, view.summary};
  if (result.experts) {
    rendering.expert_mesh = &result.experts->mesh;
    rendering.expert_specs = &result.experts->specs;
  }
  rendering.easydel_version = result.inputs.model->easydel_version().name;
  return rendering;
}

std::string PlanResultToJsonText(const PlanResult& result, const PlanViewOptions& view) {
  return PlanToJsonText(ViewOfPlan(result, view));
}

StatusOr<std::vector<std::pair<std::string, PartitionSpec>>> ResolvedRules(const PlanInputs& inputs) {
  std::vector<std::pair<std::string, PartitionSpec>> rules;
  rules.reserve(inputs.rules->rules.size());
  for (const rules::Rule& rule : inputs.rules->rules) {
    EP_ASSIGN_OR_RETURN(PartitionSpec spec,
                        planner::ResolveRuleSpec(rule, *inputs.presets, inputs.config(), nullptr, nullptr));
    rules.emplace_back(rule.pattern, std::move(spec));
  }
  return rules;
}

}  // namespace easyplan::api
