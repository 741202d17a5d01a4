#ifndef EASYPLAN_CLI_PLAN_SETUP_H_
#define EASYPLAN_CLI_PLAN_SETUP_H_

// The flags `plan`, `explain` and `validate` share, and turning them into a PlanRequest: the resolved
// config, the tree (template, --tree or --from), the rule set (built-in by model_type or --rules), the
// mesh (--mesh/--dcn/--devices or the config's sharding_axis_dims) and, when the rules are written for
// EasyDeL names but the tree has HF names, the links between the two.

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/config_flags.h"
#include "cli/context.h"
#include "core/param_tree.h"
#include "planner/plan.h"
#include "rules/rule_library.h"
#include "schemas/resolver.h"

namespace easyplan::cli {

struct PlanFlags {
  ConfigFlags config;  ///< CONFIG is optional with --tree (EasyDeL's default partition_axis then applies)
  std::string rules = "builtin";
  std::string mesh;
  std::string dcn;
  std::string uneven = "replicate";
  std::string layout = "easydel";
  std::string tree;
  std::string from;
  std::string dtype;
  int64_t max_tensors = 10'000'000;
  int64_t max_devices = int64_t{1} << 22;
  int64_t max_rules = 100'000;
};

/// Registers CONFIG, the resolve flags and the plan flags on `cmd`.
void AddPlanFlags(CLI::App* cmd, PlanFlags& flags);

/// Everything a plan is built from, owned here so PlanRequest's pointers stay valid.
struct PlanInputs {
  schemas::ResolvedConfig resolved;
  bool has_config = false;
  ParamTree tree;
  std::unique_ptr<rules::RuleLibrary> library;
  const rules::RuleSet* rules = nullptr;
  const rules::Presets* presets = nullptr;
  const rules::LogicalDims* logical_dims = nullptr;
  Mesh mesh;
  std::string mesh_source;  ///< "--mesh", "config sharding_axis_dims"
  planner::UnevenMode uneven = planner::UnevenMode::kReplicate;
  std::vector<planner::LayoutLink> links;
  int64_t max_devices = 0;

  planner::PlanRequest Request() const;
};

StatusOr<std::unique_ptr<PlanInputs>> LoadPlanInputs(Context& ctx, const PlanFlags& flags);

/// The mesh flags alone, for commands that need a mesh but no tree (`activations`).
struct MeshFlags {
  std::string mesh;
  std::string dcn;
  std::optional<int64_t> devices;
  int64_t max_devices = int64_t{1} << 22;
};

/// The mesh of --mesh (with --dcn, --devices), else of the config's sharding_axis_dims / names;
/// `source` receives which ("--mesh", "config sharding_axis_dims").
StatusOr<Mesh> MeshFromFlags(const MeshFlags& flags, const Json& config, bool has_config, std::string* source);

}  // namespace easyplan::cli

#endif  // EASYPLAN_CLI_PLAN_SETUP_H_
