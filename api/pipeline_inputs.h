#ifndef EASYPLAN_API_PIPELINE_INPUTS_H_
#define EASYPLAN_API_PIPELINE_INPUTS_H_

// The pipeline of a plan (docs/PIPELINE.md): the mesh's pp axis, the model's layers split into its
// stages (planner/pipeline.h) and each tensor's stages (planner/pipeline_stages.h), from the pipeline
// options and the model: its layer count, which tensors are the embeddings (the family's forward
// structure names them) and whether they are tied.

#include "api/options.h"
#include "api/plan_inputs.h"
#include "core/status.h"
#include "planner/pipeline_stages.h"

namespace easyplan::api {

/// What a pipeline split reads of the model and its tree: the layers, each tensor's place outside the
/// layers and the routed experts' share of a token's work.
struct PipelineRoles {
  int64_t layers = 0;
  std::vector<int64_t> layer_of;  ///< each tensor's decoder layer (planner::LayerIndexOf), -1 outside them
  std::vector<planner::OuterTensor> outer;
  double routed = 1;  ///< top_k / experts of a MoE model
};

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
