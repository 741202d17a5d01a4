#ifndef EASYPLAN_PLANNER_LAY_OUT_PLAN_H_
#define EASYPLAN_PLANNER_LAY_OUT_PLAN_H_

// The mesh half of planning (BuildPlan = MatchTree, then LayOutPlan): every tensor kind of a
// TreeMatches corrected for its shape on one mesh (layout.h), laid out in layout groups, checked
// (spec issues, logical counts, large replicated tensors), and the per-device totals. Each kind is
// planned once and replayed for its other tensors; the dead and shadowed rules come from the matches.

#include <cstdint>

#include "core/mesh.h"
#include "core/status.h"
#include "planner/layout.h"
#include "planner/plan.h"
#include "planner/tree_matches.h"

namespace easyplan::planner {

struct LayOutOptions {
  int64_t max_devices = int64_t{1} << 22;
  /// A fully replicated tensor at least this large is a warning when some mesh axis could shard it.
  int64_t large_replicated_bytes = int64_t{64} << 20;
  /// False: Plan::params stays empty (PlanRequest::keep_params).
  bool keep_params = true;
  /// A pipelined mesh (pipeline.stages > 1): the split, the mesh's pp axis, and each tree tensor's stages
  /// (PlaceOnStages), one per tree tensor. A tensor then lives on its stages' devices only.
  PipelineSplit pipeline;
  int pp_axis = -1;
  std::vector<StagePlacement> placements;
};

/// BadInput when `mesh` has more devices than `max_devices` (the first check of a plan).
Status CheckMeshSize(const Mesh& mesh, int64_t max_devices);

/// Lays `matches` out on `mesh`. Reads `matches` only: calls on different meshes may run at once on
/// one TreeMatches. Errors as BuildPlan's that depend on the mesh (too many devices, a size overflow).
StatusOr<Plan> LayOutPlan(const TreeMatches& matches, const Mesh& mesh, UnevenMode uneven,
                          const LayOutOptions& options = {});

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_LAY_OUT_PLAN_H_
