#ifndef EASYPLAN_PLANNER_EXPORT_H_
#define EASYPLAN_PLANNER_EXPORT_H_

// `easyplan export --to FORMAT`: a plan in the form another runtime reads (docs/FORMATS.md), as the
// finished text. Each format's artifact is built in its own file (export_jax.h, export_hlo.h,
// export_shardy.h, export_dtensor.h, export_tp_plan.h, export_megatron.h, export_maxtext.h); this is the
// format list and the dispatch.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/param_tree.h"
#include "core/status.h"
#include "planner/activation_table.h"
#include "planner/export_runtime.h"
#include "planner/plan.h"
#include "planner/runtime_vocabulary.h"
#include "rules/presets.h"
#include "rules/rule_set.h"
#include "schemas/dim_keys.h"

namespace easyplan::planner {

enum class ExportFormat { kJax, kJaxJson, kXlaHlo, kShardy, kTorch, kHfTpPlan, kPlanJson, kMegatron, kMaxText, kRules };

/// One export format and what it needs.
struct ExportFormatInfo {
  ExportFormat format;
  std::string_view name;  ///< what `--to` takes: "jax", "jax-json", ...
  /// About HF (torch) tensors: planned with HF names unless a layout or tree is given (torch, hf-tp-plan).
  bool hf_names = false;
  /// Needs HF names: a tree in the EasyDeL layout is an error (hf-tp-plan).
  bool requires_hf_tree = false;
  /// Needs ExportInputs::activation_table (jax, jax-json: the activation specs of every runtime mode).
  bool needs_activation_table = false;
  /// A Python module: ExportOptions::json does not apply (jax).
  bool python_module = false;
  /// Takes a plan with a pp axis (torch, json, megatron, maxtext); the others give each tensor one sharding
  /// over the whole mesh, which a tensor living on its stage's devices only does not have.
  bool pipelines = false;
  /// Writes a training step: takes --batch and --seq (megatron, maxtext).
  bool takes_batch = false;
  /// Takes --microbatches (megatron, maxtext; torch: n_microbatches; json: the plan's microbatch finding).
  bool takes_microbatches = false;
  /// The runtime vocabulary every name it writes is checked against (schemas/runtimes/*.yaml), or "".
  std::string_view vocabulary;
};

/// Every format, in the order `--to` lists them.
const std::vector<ExportFormatInfo>& ExportFormats();
/// Their names: "jax", "jax-json", "xla-hlo", "shardy", "torch", "hf-tp-plan", "json", "megatron", "maxtext".
std::vector<std::string> ExportFormatNames();
/// The format named `name`; BadInput with a did-you-mean and the list of formats otherwise.
StatusOr<const ExportFormatInfo*> FindExportFormat(std::string_view name);

struct ExportOptions {
  /// JSON instead of NAME<TAB>SHARDING lines (xla-hlo, shardy), of flag lines (megatron: an argv) or of
  /// key=value lines (maxtext: an object); the other formats are JSON already, except jax, which rejects it.
  bool json = false;
  /// --batch, --seq and --microbatches as given.
  RuntimeStep step;
};

/// The checks that need no plan: a Python module has no JSON form; --batch, --seq and --microbatches only
/// apply to the formats that take them.
Status CheckExportOptions(const ExportFormatInfo& format, const ExportOptions& options);
/// The checks that need the plan's mesh: a pp axis for a format that does not pipeline.
Status CheckExportPipeline(const ExportFormatInfo& format, const PipelineSplit& pipeline);
/// The checks that need the tree only: hf-tp-plan needs HF tensor names.
Status CheckExportTree(const ExportFormatInfo& format, const ParamTree& tree);

/// What an export is built from. The pointers must stay valid during ExportPlan.
struct ExportInputs {
  const Plan* plan = nullptr;  ///< with its params (PlanRequest::keep_params)
  const ParamTree* tree = nullptr;
  const rules::RuleSet* rules = nullptr;
  const rules::Presets* presets = nullptr;
  const Json* config = nullptr;    ///< the resolved config
  const Json* geometry = nullptr;  ///< its family's geometry (schemas::ResolvedConfig::geometry); null: none
  /// The config keys its dims are read from (schemas::ResolvedConfig::dim_keys); null: the shared ones.
  const schemas::DimKeysByObject* dim_keys = nullptr;
  /// rules/_activations.yaml, for the formats that need it (ExportFormatInfo::needs_activation_table).
  const ActivationTable* activation_table = nullptr;
  /// The model facts the runtime exports need (megatron, maxtext): its experts and checkpointing policy.
  RuntimeModel model;
  /// ExportFormatInfo::vocabulary, parsed: required by the formats that name one (torch: when pipelined).
  const RuntimeVocabulary* vocabulary = nullptr;
  /// The EasyDeL version the plan describes, named in the headers of jax and rules; "" names none.
  std::string easydel_version;
  /// The `json` format: the plan as `plan --format json` writes it. That writer formats command output
  /// and lives above the planner, so the caller provides it; called only for that format.
  std::function<StatusOr<std::string>()> plan_json;
};

/// The finished artifact of `format` (a name from ExportFormatNames). BadInput for an unknown format
/// (with a did-you-mean) and for what CheckExportOptions and CheckExportTree reject; Internal when an
/// input the format needs is missing.
StatusOr<std::string> ExportPlan(std::string_view format, const ExportInputs& inputs,
                                 const ExportOptions& options = {});

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_EXPORT_H_
