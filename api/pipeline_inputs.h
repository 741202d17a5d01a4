#ifndef EASYPLAN_API_PIPELINE_INPUTS_H_
#define EASYPLAN_API_PIPELINE_INPUTS_H_

// The pipeline of a plan (docs/PIPELINE.md): the mesh's pp axis, the model's layers split into its
// stages (planner/pipeline.h) and each tensor's stages (planner/pipeline_stages.h), from the pipeline
// options and the model: its layer count, which tensors are the embeddings (the family's forward
// structure names them) and whether they are tied.

#include "api/options.h"
#include "api/plan_inputs.h"
#include "core/status.h"

namespace easyplan::api {

/// Fills inputs.pipeline, inputs.pp_axis and inputs.placements from `options` when the mesh has a pp
/// axis above 1. Errors name the flag: the pipeline options without a pp axis, a pp axis for a command
/// that does not take the pipeline options, --pp-layers that do not fit the model, a schedule's limits.
Status AddPipeline(PlanInputs& inputs, const PipelineOptions& options);

/// The pipeline's findings on `plan` (built from `inputs`): pipeline-microbatches (an error) when
/// `inputs.microbatches` is too few for the schedule, and pipeline-imbalance (a warning) for a stage whose
/// matmul parameters per token, a layer's forward work, exceed the stages' mean by more than 10%.
void AddPipelineFindings(const PlanInputs& inputs, planner::Plan& plan);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_PIPELINE_INPUTS_H_
