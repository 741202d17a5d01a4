#include "planner/export_runtime.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "planner/pipeline.h"

namespace easyplan::planner {

StatusOr<RoleSizes> RolesOf(const Mesh& mesh, const ParallelAxisNames& names, std::string_view runtime) {
  RoleSizes out;
  const std::pair<const std::string*, RoleSize*> roles[] = {
      {&names.dp, &out.dp}, {&names.fsdp, &out.fsdp}, {&names.ep, &out.ep}, {&names.tp, &out.tp}, {&names.sp, &out.sp},
  };
  static constexpr const char* kRoleKeys[] = {"data_parallel_axis", "fully_sharded_data_parallel_axis",
                                              "expert_parallel_axis", "tensor_parallel_axis", "sequence_parallel_axis"};
  const std::string pp(kPipelineAxis);
  for (size_t k = 0; k < mesh.shape.size(); ++k) {
    const std::string& axis = mesh.axis_names[k];
    const int64_t size = mesh.shape[k];
    const int64_t dcn = mesh.dcn_shape.empty() ? 1 : mesh.dcn_shape[k];
    const RoleSize role{.total = size, .ici = size / dcn, .dcn = dcn};
    if (axis == pp) {
      out.pp = role;
      continue;
    }
    std::vector<size_t> named;
    for (size_t r = 0; r < std::size(roles); ++r) {
      if (*roles[r].first == axis) named.push_back(r);
    }
    if (size == 1) continue;
    if (named.empty()) {
      return Status::BadInput(
          {},
          fmt::format("mesh axis '{}' (size {}) is none of the config's partition_axis roles (dp '{}', fsdp '{}', "
                      "ep '{}', tp '{}', sp '{}') nor pp: {} has no counterpart for it",
                      axis, size, names.dp, names.fsdp, names.ep, names.tp, names.sp, runtime),
          {"name the mesh axes after the roles, or give the axis size 1"});
    }
    if (named.size() > 1) {
      return Status::BadInput(
          {},
          fmt::format("mesh axis '{}' (size {}) is both the config's {} and its {}: {} sizes each role on its own",
                      axis, size, kRoleKeys[named[0]], kRoleKeys[named[1]], runtime),
          {"give each partition_axis role its own mesh axis"});
    }
    *roles[named[0]].second = role;
  }
  return out;
}

StatusOr<CheckpointPolicy> RuntimeCheckpointPolicy(const std::string& gradient_checkpointing,
                                                   std::string_view runtime) {
  if (std::optional<CheckpointPolicy> policy = ParseCheckpointPolicy(gradient_checkpointing)) return *policy;
  return Status::BadInput(
      {},
      fmt::format("config: gradient_checkpointing '{}' saves activations by their names inside EasyDeL's modules, "
                  "which {} does not have",
                  gradient_checkpointing, runtime),
      {"expected one of \"\" (none), everything_saveable, nothing_saveable, checkpoint_dots (dots_saveable), "
       "checkpoint_dots_with_no_batch_dims; e.g. --set gradient_checkpointing=nothing_saveable"});
}

}  // namespace easyplan::planner
