#ifndef EASYPLAN_API_PLAN_INPUTS_H_
#define EASYPLAN_API_PLAN_INPUTS_H_

// Everything a plan is built from, assembled from a Model and PlanOptions: the tree (template, --tree
// or --from), the rule set (built-in by model_type or --rules), the mesh (--mesh/--dcn/--devices or
// the config's sharding_axis_dims) and, when the rules are written for EasyDeL names but the tree has
// HF names, the links between the two. The mesh-free parts come from the Model's caches.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/checked.h"
#include "api/model.h"
#include "api/options.h"
#include "core/mesh.h"
#include "planner/plan.h"

namespace easyplan::api {

struct PipelineRoles;  // api/pipeline_inputs.h

struct PlanInputs {
  std::shared_ptr<const Model> model;
  TreeSpec tree_spec;
  Model::TreePtr tree;
  const rules::RuleSet* rules = nullptr;
  const rules::Presets* presets = nullptr;
  const rules::LogicalDims* logical_dims = nullptr;
  Model::LinksPtr links;
  Mesh mesh;
  std::string mesh_source;  ///< "--mesh", "config sharding_axis_dims"
  planner::UnevenMode uneven = planner::UnevenMode::kReplicate;
  int64_t max_devices = 0;
  /// The pipeline of the mesh's pp axis (stages 1 without one: api/pipeline_inputs.h), the axis, and
  /// each tree tensor's stages.
  planner::PipelineSplit pipeline;
  int pp_axis = -1;
  std::vector<planner::StagePlacement> placements;
  /// Per stage: the matmul parameters a token passes through there (routed experts at top_k / experts;
  /// an embedding lookup is none), the work the imbalance finding compares.
  std::vector<double> stage_work;
  /// What the split reads of the model and tree, whatever the stage count (api/pipeline_inputs.h): kept
  /// so that another split of the same inputs (suggest's schedules) does not read them again.
  std::shared_ptr<const PipelineRoles> pipeline_roles;
  /// The step's microbatches, when the command knows them (--microbatches): Build checks them against the
  /// pipeline's schedule.
  std::optional<int64_t> microbatches;

  bool has_config() const { return model->has_config(); }
  const schemas::ResolvedConfig& resolved() const { return model->resolved(); }
  const Json& config() const { return model->config(); }
  planner::PlanRequest Request() const;
  /// The plan: the model's rule matches for this tree (Model::Matches, computed once per tree and
  /// rule set) laid out on `mesh` (planner::LayOutPlan). Equal to planner::BuildPlan(Request()) with
  /// the same `keep_params`.
  StatusOr<planner::Plan> Build(bool keep_params = true) const;
};

/// One source for the tree: --tree, --from or a tree given in memory, not two.
Status CheckTreeSources(const PlanOptions& options);

/// The checks of PlanOptions that need no model: each option's declared check and the tree's sources.
Status CheckPlanOptions(const PlanOptions& options);
/// What Checked<PlanOptions> runs (api/checked.h): CheckPlanOptions.
inline Status OptionChecks(const PlanOptions& options) { return CheckPlanOptions(options); }

/// A plan is of a config or of a --tree file: CONFIG is required unless the model `has_config` or the
/// tree comes from a file or from memory.
Status CheckPlanSource(const PlanOptions& options, bool has_config);

/// The Model of `options.config` (CONFIG, or EasyDeL's defaults when there is none) in `env`; `diags`
/// receives the resolver's warnings (see Model::Load).
StatusOr<std::shared_ptr<const Model>> LoadModel(const Environment& env, const ConfigOptions& options,
                                                 std::vector<Diag>* diags);

/// The inputs of a plan of `model` under `options` (options.config is ignored: the model has it). Only
/// the checks that need the model run here (CheckPlanSource, the microbatch limit).
StatusOr<PlanInputs> PreparePlan(const std::shared_ptr<const Model>& model, const Checked<PlanOptions>& options);
/// The same for options not checked yet: checked once, then prepared.
StatusOr<PlanInputs> PreparePlan(const std::shared_ptr<const Model>& model, const PlanOptions& options);

/// Checked options, LoadModel and PreparePlan, in that order (the CLI's plan commands).
StatusOr<PlanInputs> LoadPlanInputs(const Environment& env, const PlanOptions& options, std::vector<Diag>* diags);

/// The tree PlanOptions name (--tree, --from, or the template in --layout / --dtype).
StatusOr<TreeSpec> TreeSpecOf(const PlanOptions& options);

/// The mesh of --mesh (with --dcn; `devices`, the config options' --devices, fills a -1), else of the
/// config's sharding_axis_dims / names; `source` receives which ("--mesh", "config sharding_axis_dims").
/// `rule_axes`, when given, lists the axes the rules use; it is called only when --mesh names an axis
/// the config does not.
using RuleAxesFn = std::function<std::vector<std::string>()>;
StatusOr<Mesh> MeshFromOptions(const MeshOptions& options, std::optional<int64_t> devices, const Json& config,
                               bool has_config, std::string* source, const RuleAxesFn& rule_axes = {});

/// The mesh axes `rules` name once resolved against `config` (presets and tokens expanded), in order of
/// first use: with the config's axes, what --mesh may size.
std::vector<std::string> RuleAxes(const rules::RuleSet& rules, const rules::Presets& presets, const Json& config);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_PLAN_INPUTS_H_
