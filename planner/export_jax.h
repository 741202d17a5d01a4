#ifndef EASYPLAN_PLANNER_EXPORT_JAX_H_
#define EASYPLAN_PLANNER_EXPORT_JAX_H_

// JAX exports of a plan: a Python module holding only data (the mesh, the ordered partition rules as
// (regex, PartitionSpec(...)) tuples for eformer's match_partition_rules, and every parameter's
// effective PartitionSpec), and the same facts as JSON in MaxText's golden-dump shape
// (maxtext tests/utils/sharding_info/*/named_shardings.json):
//
//   {"model/embed_tokens/embedding": {"mesh": {"axis_names": ["dp", ...], "shape": {"dp": 1, ...}},
//                                     "partition_spec": ["tp", ["fsdp", "sp"]], "shape": [128, 64]}}

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/json.h"
#include "core/mesh.h"
#include "core/partition_spec.h"
#include "core/shape.h"
#include "core/status.h"
#include "planner/plan.h"
#include "rules/presets.h"
#include "rules/rule_set.h"

namespace easyplan::planner {

struct JaxRule {
  std::string pattern;  ///< a regex for re.search
  PartitionSpec spec;   ///< resolved to mesh axes
};

struct JaxParam {
  std::string name;
  Shape shape;
  PartitionSpec spec;  ///< effective spec, P() and P(None) kept distinct
};

/// The activation side of the export (planner/activations.h): per runtime mode, the raw specs EasyDeL
/// resolves (None where EasyDeL has no spec, e.g. logits outside train), and for MoE configs the folded
/// (dp, ep, tp) expert mesh.
struct JaxActivations {
  std::string layout = "bthd";
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::optional<PartitionSpec>>>>> modes;
  std::optional<std::array<int64_t, 3>> expert_mesh_shape;
  std::array<std::string, 3> expert_mesh_axis_names;
};

/// A Python string literal (double quotes; backslash, quote and control characters escaped).
std::string PythonString(std::string_view text);

/// `PartitionSpec('tp', ('fsdp', 'sp'))`, `PartitionSpec()`, `PartitionSpec(None)`.
std::string PythonPartitionSpec(const PartitionSpec& spec);

/// The module text. `header` lines are written as `# ` comments at the top. The module imports only
/// `jax.sharding.PartitionSpec` and defines MESH_AXIS_NAMES, MESH_SHAPE (and MESH_DCN_SHAPE for a
/// hybrid mesh), PARTITION_RULES and PARAM_SPECS; with `activations`, also ACTIVATION_LAYOUT,
/// ACTIVATION_SPECS = {mode: {name: PartitionSpec or None}} and, for MoE, EXPERT_MESH_SHAPE and
/// EXPERT_MESH_AXIS_NAMES.
std::string JaxModuleText(const Mesh& mesh, const std::vector<JaxRule>& rules, const std::vector<JaxParam>& params,
                          const std::vector<std::string>& header, const JaxActivations* activations = nullptr);

/// MaxText's named_shardings.json shape, one member per parameter in order; with `activations`, one
/// more member "__activations__": {"layout", "modes": {mode: {name: spec or null}}, "expert_mesh"}.
Json JaxShardingsJson(const Mesh& mesh, const std::vector<JaxParam>& params,
                      const JaxActivations* activations = nullptr);

/// Every tensor of the plan with its effective spec, in tree order. REQUIRES: the plan kept its params.
std::vector<JaxParam> JaxParamsOf(const Plan& plan, const ParamTree& tree);

/// The `--to jax` artifact: JaxModuleText with every rule's spec resolved under `config`, the plan's
/// params, a header naming the EasyDeL version (when not ""), the mesh, the rule file and the uneven
/// mode (and, when the rules are written for another layout than `tree`'s, which names each table uses),
/// and `activations`.
StatusOr<std::string> JaxModuleExport(const Plan& plan, const ParamTree& tree, const rules::RuleSet& rules,
                                      const rules::Presets& presets, const Json& config,
                                      const JaxActivations& activations, const std::string& easydel_version = "");

/// The `--to jax-json` artifact: JaxShardingsJson of the plan's params and `activations`, as EmitJson
/// writes it.
std::string JaxJsonExport(const Plan& plan, const ParamTree& tree, const JaxActivations& activations);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_EXPORT_JAX_H_
