#ifndef EASYPLAN_PLANNER_EXPORT_MEGATRON_H_
#define EASYPLAN_PLANNER_EXPORT_MEGATRON_H_

// `easyplan export --to megatron`: Megatron-LM's command-line arguments for a plan's parallel layout, its
// step and its checkpointing policy (docs/FORMATS.md, "megatron"). Every flag is one of
// schemas/runtimes/megatron.yaml, Megatron-LM's megatron/training/arguments.py at the commit it names.
//
//   --tensor-model-parallel-size 2
//   --pipeline-model-parallel-size 4
//   --decoder-first-pipeline-num-layers 7
//   --context-parallel-size 1
//   --sequence-parallel
//   ...

#include <string>

#include "core/status.h"
#include "planner/export_runtime.h"
#include "planner/plan.h"
#include "planner/runtime_vocabulary.h"

namespace easyplan::planner {

/// The arguments, one flag and its values per line, or with `json` {"arguments": [flag, value, ...]} (an
/// argv). BadInput for what Megatron-LM cannot run as planned: a schedule other than 1F1B and interleaved
/// 1F1B, an ep axis on a model without experts, a mesh axis with no role, a batch its microbatch size would
/// not divide, a name-based checkpointing policy. Internal when a flag or value is not in `vocabulary`.
StatusOr<std::string> MegatronExport(const Plan& plan, const RoleSizes& roles, const RuntimeModel& model,
                                     const RuntimeStep& step, const RuntimeVocabulary& vocabulary, bool json);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_EXPORT_MEGATRON_H_
