#ifndef EASYPLAN_CLI_ACTIVATION_SETUP_H_
#define EASYPLAN_CLI_ACTIVATION_SETUP_H_

// The runtime-mode flags `activations` and `validate --mode` share, and turning a resolved config and a
// mesh into an activation plan (planner/activations.h) or an expert-mesh report (plan, export).

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>

#include "cli/context.h"
#include "cli/plan_setup.h"
#include "core/json.h"
#include "core/mesh.h"
#include "planner/activations.h"
#include "planner/expert_mesh.h"
#include "rules/presets.h"

namespace easyplan::cli {

struct ActivationFlags {
  std::string mode;  ///< "" = not given (validate: no activation findings; activations: train)
  std::string attention_layout = "bthd";
  bool qkv_mni = false;
  std::optional<int> softmax_aux_ndim;
  std::optional<int64_t> batch;
  std::optional<int64_t> seq;
  std::string dtype;                  ///< activation dtype; "" = the config's torch_dtype, else bfloat16
  std::string kernel;                 ///< "" = the config's attn_mechanism (decode: decode_attn_mechanism)
  std::string cache = "transformer";  ///< transformer or ragged (eSurge's RaggedPagesCache)
  std::optional<int64_t> page_size;
  std::optional<int64_t> num_pages;
  std::string cache_version;  ///< v2 or v3; "" = v3
};

/// Registers --mode, --batch, --seq (all commands) and, when `full`, --layout, --qkv-mni,
/// --softmax-aux-ndim, --dtype, --kernel, --cache, --page-size, --num-pages and --cache-version
/// (`activations`).
void AddActivationFlags(CLI::App* cmd, ActivationFlags& flags, bool full);

/// rules/_activations.yaml from --schemas-dir (or the context's), else the embedded copy.
StatusOr<std::unique_ptr<planner::ActivationTable>> LoadActivationTable(Context& ctx, const std::string& schemas_dir);

/// The flag checks that need no config: --mode, --layout, --softmax-aux-ndim, --batch with --seq,
/// --cache and the ragged-cache flags.
Status CheckActivationFlags(const ActivationFlags& flags);

/// Builds the activation plan of `config` on `mesh` for the flags (mode defaults to train).
StatusOr<planner::ActivationPlan> BuildActivationsFromFlags(const ActivationFlags& flags,
                                                            const planner::ActivationTable& table,
                                                            const rules::Presets& presets, const Json& config,
                                                            const Mesh& mesh);

/// The expert mesh and expert specs of a MoE config; nullopt for a dense one.
struct ExpertReport {
  planner::ExpertMesh mesh;
  planner::ExpertSpecs specs;
};
StatusOr<std::optional<ExpertReport>> ExpertReportOf(const planner::ActivationTable& table,
                                                     const rules::Presets& presets, const Json& config,
                                                     const Mesh& mesh);

/// ExpertReportOf for a plan's config and mesh, loading the activation table from the run's data.
StatusOr<std::optional<ExpertReport>> ExpertReportForPlan(Context& ctx, const PlanInputs& inputs,
                                                          const std::string& schemas_dir);

}  // namespace easyplan::cli

#endif  // EASYPLAN_CLI_ACTIVATION_SETUP_H_
