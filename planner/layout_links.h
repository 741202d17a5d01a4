#ifndef EASYPLAN_PLANNER_LAYOUT_LINKS_H_
#define EASYPLAN_PLANNER_LAYOUT_LINKS_H_

// Planning an HF-layout tree with rules written for EasyDeL's names: each HF tensor is matched and
// corrected as the EasyDeL parameter it becomes, and the spec is carried back through the
// converter's dim permutation; a per-expert HF tensor is one expert of a stacked kernel, held by the
// devices whose slice of the expert dim contains it.

#include <vector>

#include "core/param_tree.h"
#include "core/status.h"
#include "planner/plan.h"
#include "schemas/tree_builder.h"

namespace easyplan::planner {

/// The spec `rule_spec` (on the rule tensor's dims) laid on a tensor whose dim k is the rule tensor's
/// dim dim_of[k]; trailing None entries beyond the rule spec's length are dropped.
PartitionSpec MapSpecThroughLink(const PartitionSpec& rule_spec, const std::vector<int>& dim_of);

/// One link per tensor of `tree` (an HF-layout tree from the template, a checkpoint or a user file),
/// found by HF name among `expanded` (the template expanded over the same config). Tensors the
/// template does not know, or knows only in HF (FP8 scales, MTP layers, buffers), get a link without
/// counterpart. BadInput if `tree` is not in the HF layout.
StatusOr<std::vector<LayoutLink>> LinkHfToEasyDel(const ParamTree& tree,
                                                  const std::vector<schemas::ExpandedTensor>& expanded);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_LAYOUT_LINKS_H_
