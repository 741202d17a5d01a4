#ifndef EASYPLAN_API_FORWARD_MODEL_H_
#define EASYPLAN_API_FORWARD_MODEL_H_

// Which reference forward pass (kernels/model.h) a model runs: its family's `numeric_check` block
// (schemas/families/<model_type>.yaml). `check` shrinks that model to a tiny one; `cost` and `suggest`
// dry-run it at full size (kernels/dry_run.h).

#include <string>

#include "api/model.h"
#include "kernels/model.h"
#include "planner/plan.h"
#include "schemas/numeric_check_spec.h"

namespace easyplan::api {

/// The family's numeric_check block for `model`; an error listing the covered model types when the
/// family has none. `what` names the caller in that error ("the numeric check", "the step-time model")
/// and `instead` says what to use in its place.
/// The spec is worked out once per model (Model::ForwardSpec) and shared.
StatusOr<const schemas::NumericCheckSpec*> ForwardPassOf(const Model& model, const std::string& what,
                                                         const std::string& instead);

/// The full-size model the dry run executes for `plan` (laid out on `tree`, EasyDeL names), with
/// `batch` sequences of `seq` tokens per step. Errors: no reference forward pass for the family.
StatusOr<kernels::ModelDesc> FullModelDesc(const Model& model, const ParamTree& tree, const planner::Plan& plan,
                                           int64_t batch, int64_t seq);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_FORWARD_MODEL_H_
