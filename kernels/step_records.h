#ifndef EASYPLAN_KERNELS_STEP_RECORDS_H_
#define EASYPLAN_KERNELS_STEP_RECORDS_H_

// The communication of a step outside its forward pass, recorded beside the dry run's forward records
// (kernels/dry_run.h) so that the step model (step/step_time.h) prices records and nothing else:
//  - A pipelined plan's stage-to-stage sends: at every boundary between consecutive model chunks on
//    different stages (StageBoundaries), one microbatch's hidden state from each device to its
//    counterpart on the next stage, laid out as the receiving stage expects it (BoundarySpec). These are
//    the records check's pipelined forward (kernels/pipeline_forward.h) makes for the sends it executes
//    (StageSendRecord).
//  - A training step's gradient sync: each parameter's gradient summed over the data axes (the batch and
//    sequence axes of the activation layout, of size > 1) that its own spec leaves it replicated on, one
//    all-reduce per set of such axes (the buckets DDP and FSDP reduce behind the backward), once per step.
//    A pipelined plan syncs each stage's own parameters: one set of records per stage
//    (CommRecord::stage), a tied embedding on both of its stages.
//    check runs no backward pass, so these records are the step model's own; their bytes are the ring's
//    2 (g - 1) / g of the gradient shard.

#include <cstdint>

#include "core/param_tree.h"
#include "core/status.h"
#include "kernels/dry_run.h"
#include "kernels/model.h"
#include "planner/plan.h"

namespace easyplan::kernels {

struct StepRecordOptions {
  /// Record the gradient sync (a training step).
  bool train = false;
  /// The gradient dtype's bytes, which the all-reduce moves.
  int64_t gradient_bytes_per_element = 4;
};

/// Appends to `run` (the dry run of one microbatch of `model` over `plan`, laid out on `tree`) the stage
/// sends of a pipelined plan and, in training, the gradient sync. BadInput when the gradient bytes
/// overflow 64 bits.
Status AppendStepRecords(const ModelDesc& model, const planner::Plan& plan, const ParamTree& tree,
                         const StepRecordOptions& options, DryRunReport& run);

}  // namespace easyplan::kernels

#endif  // EASYPLAN_KERNELS_STEP_RECORDS_H_
