#ifndef EASYPLAN_KERNELS_LAYOUT_CHECK_H_
#define EASYPLAN_KERNELS_LAYOUT_CHECK_H_

// The layout check: for every layout group of a plan, at full size and without tensor memory, the
// device slices tile the tensor exactly. Per group, per dim, the distinct non-empty ranges the devices
// hold must be disjoint and cover the dim (1-D interval tiling); the slices are then the cartesian
// product of those ranges, and every product box must be held by exactly `replicas` devices, each
// replica id once (so one replica group's slices are disjoint and cover the tensor). Each device's
// slice is also recomputed from the effective spec by this module's own NamedSharding / torch.chunk
// code and compared with the plan's TensorLayout, and shard shapes and bytes with what `plan` reports.
// Cost: O(groups x devices x rank), never O(elements).

#include <cstdint>
#include <string>
#include <vector>

#include "core/param_tree.h"
#include "kernels/collectives.h"
#include "planner/plan.h"

namespace easyplan::kernels {

struct LayoutError {
  std::string param;  ///< first tensor of the group
  int64_t device = -1;
  std::string message;
};

struct LayoutCheckResult {
  int64_t groups = 0;
  int64_t tensors = 0;
  int64_t devices = 0;
  int64_t errors_total = 0;
  std::vector<LayoutError> errors;  ///< the first `max_errors`
  bool ok() const { return errors_total == 0; }
};

struct LayoutCheckOptions {
  Injection injection = Injection::kNone;  ///< kOffsetBlock, kSwapTupleOrder and kWrongDim apply here
  int64_t max_errors = 20;
};

LayoutCheckResult CheckLayouts(const planner::Plan& plan, const ParamTree& tree, const LayoutCheckOptions& options);

}  // namespace easyplan::kernels

#endif  // EASYPLAN_KERNELS_LAYOUT_CHECK_H_
