#ifndef EASYPLAN_KERNELS_PIPELINE_CHECK_H_
#define EASYPLAN_KERNELS_PIPELINE_CHECK_H_

// Internal to kernels: the numeric check (kernels/numeric_check.h) of a pipelined plan, which
// RunNumericCheck hands over to. Each stage's devices hold only the parameters the plan puts on that
// stage (planner::LayoutGroup::stages), each shard is checked against its spec there, and the forward
// runs as the stages run it (kernels/pipeline_forward.h); every output is compared, on the devices of
// the stage that produced it, with the unsharded reference. A parameter a stage's layers read but the
// plan put on another stage is a shard error on that stage, never a crash.
//
// On a distributed engine every process runs the stages whose devices it runs; the root gathers every
// output, and checks each process's collectives against an in-process rerun's for the same stages (the
// rerun's log, the whole pipeline's, is the report's).

#include "core/param_tree.h"
#include "core/status.h"
#include "kernels/model.h"
#include "kernels/numeric_check.h"
#include "planner/plan.h"

namespace easyplan::kernels::internal {

/// RunNumericCheck for a plan whose pipeline has more than one stage (planner::Plan::pipeline).
StatusOr<NumericReport> RunPipelinedCheck(const ModelDesc& model, const planner::Plan& plan, const ParamTree& tree,
                                          const NumericOptions& options);

}  // namespace easyplan::kernels::internal

#endif  // EASYPLAN_KERNELS_PIPELINE_CHECK_H_
