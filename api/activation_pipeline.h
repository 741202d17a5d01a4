#ifndef EASYPLAN_API_ACTIVATION_PIPELINE_H_
#define EASYPLAN_API_ACTIVATION_PIPELINE_H_

// A runtime mode's activations: turning a resolved config and a mesh into an activation plan
// (planner/activations.h), and the expert-mesh report of a MoE plan (plan, export).

#include <memory>
#include <optional>
#include <string>

#include "api/options.h"
#include "api/plan_inputs.h"
#include "core/json.h"
#include "core/mesh.h"
#include "planner/activations.h"
#include "planner/expert_mesh.h"
#include "rules/presets.h"

namespace easyplan::api {

/// The option checks that need no config: --mode, --layout, --softmax-aux-ndim, --batch with --seq,
/// --cache and the ragged-cache options.
Status CheckActivationOptions(const ActivationOptions& options);
/// What Checked<ActivationOptions> runs (api/checked.h).
inline Status OptionChecks(const ActivationOptions& options) { return CheckActivationOptions(options); }

/// The activation plan of `config` on `mesh` for the options (mode defaults to train).
StatusOr<planner::ActivationPlan> BuildActivations(const Checked<ActivationOptions>& options,
                                                   const planner::ActivationTable& table, const rules::Presets& presets,
                                                   const schemas::ResolvedConfig& resolved, const Mesh& mesh);

/// The expert mesh and expert specs of a MoE config; nullopt for a dense one.
struct ExpertReport {
  planner::ExpertMesh mesh;
  planner::ExpertSpecs specs;
};
StatusOr<std::optional<ExpertReport>> ExpertReportOf(const planner::ActivationTable& table,
                                                     const rules::Presets& presets,
                                                     const schemas::ResolvedConfig& resolved, const Mesh& mesh);

/// ExpertReportOf for a plan's config and mesh.
StatusOr<std::optional<ExpertReport>> ExpertReportForPlan(const PlanInputs& inputs);

/// The result of `easyplan activations`: the plan, the model type and where the mesh came from.
struct ActivationsResult {
  planner::ActivationPlan plan;
  std::string model_type;
  std::string mesh_source;
  std::string easydel_version;  ///< schemas/easydel_versions.yaml
  bool strict = false;
  /// Exit status of the command: errors, or warnings under --strict.
  bool Failed() const;
};

/// `activations`: the model's activations in a runtime mode on the mesh of `mesh`.
StatusOr<ActivationsResult> Activations(const std::shared_ptr<const Model>& model, const MeshOptions& mesh,
                                        const Checked<ActivationOptions>& options);
/// The same for options not checked yet: checked once (CheckActivationOptions), then built.
StatusOr<ActivationsResult> Activations(const std::shared_ptr<const Model>& model, const MeshOptions& mesh,
                                        const ActivationOptions& options);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_ACTIVATION_PIPELINE_H_
