#ifndef EASYPLAN_PLANNER_EXPORT_TORCH_PIPELINE_H_
#define EASYPLAN_PLANNER_EXPORT_TORCH_PIPELINE_H_

// The pipeline of a pipelined plan as torch.distributed.pipelining runs it: the `pipeline` member of
// `easyplan export --to torch` (docs/FORMATS.md, "torch"). The schedule class comes from pytorch/pytorch
// torch/distributed/pipelining/schedules.py at 00722e648b740f91d0e71494baa17891749fd291, the module lists are
// torchtitan's module_fqns_per_model_part (pytorch/torchtitan torchtitan/config/job_config.py at
// 6404b932421f5ce382e7dac5ad381b2c17b1373c): one list of module FQNs per model part (stage), stage c on pp
// rank c mod pp, the "loop" assignment of torch's looped schedules and Megatron-LM's interleaving.
//
//   "pipeline": {"pp_dim_name": "pp", "schedule": "Schedule1F1B", "schedule_name": "1F1B",
//                "stages_per_rank": 1, "n_microbatches": 8,
//                "module_fqns_per_model_part": [["model.embed_tokens", "model.layers.0", ...], ...],
//                "stage_pp_ranks": [0, 1, 2, 3]}

#include <cstdint>
#include <optional>

#include "core/json.h"
#include "core/param_tree.h"
#include "core/status.h"
#include "planner/plan.h"
#include "planner/runtime_vocabulary.h"

namespace easyplan::planner {

/// The `pipeline` member for `plan` (REQUIRES: pipelined, with its params). BadInput for DualPipe, which
/// torch runs only as DualPipeV, a different stage layout; Internal when a class or schedule name is not in
/// `vocabulary` (schemas/runtimes/torch_pipelining.yaml).
StatusOr<Json> TorchPipelineJson(const Plan& plan, const ParamTree& tree, const RuntimeVocabulary& vocabulary,
                                 std::optional<int64_t> microbatches);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_EXPORT_TORCH_PIPELINE_H_
