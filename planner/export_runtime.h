#ifndef EASYPLAN_PLANNER_EXPORT_RUNTIME_H_
#define EASYPLAN_PLANNER_EXPORT_RUNTIME_H_

// What the exports for the training runtimes share (export_megatron.h, export_maxtext.h; docs/FORMATS.md,
// "Runtimes that pipeline"): the plan's mesh read by EasyDeL role, the step they are given, what they
// need to know of the model, and the checkpointing policy they translate.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/mesh.h"
#include "core/status.h"
#include "planner/expert_mesh.h"
#include "planner/memory.h"

namespace easyplan::planner {

/// The step a runtime export writes, as given: --batch (sequences per optimizer step, every microbatch
/// together), --seq and --microbatches.
struct RuntimeStep {
  std::optional<int64_t> batch;
  std::optional<int64_t> seq;
  std::optional<int64_t> microbatches;
};

/// What a runtime export needs to know of the model besides its plan (schemas/model_dims.h).
struct RuntimeModel {
  /// Routed experts; 0 for a dense model; nullopt when there is no config (a --tree of the user's own).
  std::optional<int64_t> experts;
  int64_t first_dense_layers = 0;      ///< first_k_dense_replace: dense layers before the MoE ones
  std::string gradient_checkpointing;  ///< the config's policy ("" = none)
  /// The expert parallelism EasyDeL's fused MoE path runs: the ep size of the folded (dp, ep, tp) expert
  /// mesh (planner/expert_mesh.h), i.e. ep x fsdp x sp under the default fsdp/sp_is_ep_bound.
  int64_t expert_parallel = 1;

  bool HasExperts(int64_t ep_size) const { return experts ? *experts > 0 : ep_size > 1; }
};

/// One EasyDeL role's mesh size, and its factors within a slice (ICI) and across slices (DCN, --dcn).
struct RoleSize {
  int64_t total = 1;
  int64_t ici = 1;
  int64_t dcn = 1;
};

/// The plan's mesh by role: the axes the config's partition_axis names (data_parallel_axis, ...) and pp.
struct RoleSizes {
  RoleSize dp, fsdp, ep, tp, sp, pp;
  /// dp x fsdp x ep: the ranks that see different sequences in a runtime whose only data axes are these
  /// (Megatron-LM's data-parallel size, world / (tp x pp x cp)).
  int64_t DataRanks() const { return dp.total * fsdp.total * ep.total; }
};

/// Reads `mesh` by role. BadInput naming `runtime` for an axis of size > 1 that no role names (it has no
/// counterpart there) and for one axis two roles name.
StatusOr<RoleSizes> RolesOf(const Mesh& mesh, const ParallelAxisNames& names, std::string_view runtime);

/// The config's gradient_checkpointing as a policy the runtimes can be told. BadInput naming the key for a
/// policy that saves by names inside EasyDeL's modules (save_only_these_names, mlp_notsaveable, ...): no
/// runtime has those names.
StatusOr<CheckpointPolicy> RuntimeCheckpointPolicy(const std::string& gradient_checkpointing, std::string_view runtime);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_EXPORT_RUNTIME_H_
