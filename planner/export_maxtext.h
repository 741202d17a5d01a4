#ifndef EASYPLAN_PLANNER_EXPORT_MAXTEXT_H_
#define EASYPLAN_PLANNER_EXPORT_MAXTEXT_H_

// `easyplan export --to maxtext`: MaxText's config keys for a plan's mesh, pipeline, step and checkpointing
// policy (docs/FORMATS.md, "maxtext"), as the `key=value` overrides its trainer takes after the config file.
// Every key is one of schemas/runtimes/maxtext.yaml, the fields of MaxText's src/maxtext/configs/types.py
// at the commit it names.
//
//   ici_data_parallelism=1
//   ici_pipeline_parallelism=4
//   ici_fsdp_parallelism=2
//   ...
//   remat_policy=full

#include <string>

#include "core/status.h"
#include "planner/export_runtime.h"
#include "planner/plan.h"
#include "planner/runtime_vocabulary.h"

namespace easyplan::planner {

/// The overrides, one `key=value` per line, or with `json` one JSON object of them. BadInput for what
/// MaxText cannot run as planned: a pipeline schedule other than GPipe's, stages with different layer
/// counts, a model whose first layers are dense, microbatch counts its pipeline refuses, a batch its
/// per-device batch size cannot give exactly, a name-based checkpointing policy, a mesh axis with no role.
/// Internal when a key or a remat_policy value is not in `vocabulary`.
StatusOr<std::string> MaxTextExport(const Plan& plan, const RoleSizes& roles, const RuntimeModel& model,
                                    const RuntimeStep& step, const RuntimeVocabulary& vocabulary, bool json);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_EXPORT_MAXTEXT_H_
