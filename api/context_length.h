#ifndef EASYPLAN_API_CONTEXT_LENGTH_H_
#define EASYPLAN_API_CONTEXT_LENGTH_H_

// A step's sequence against the context the model was built for: the family's `context:` (docs/SCHEMAS.md)
// names the config key that bounds it and whether positions are learned. Past a learned position table
// (gpt2's n_positions) the model cannot run at all: bad input, exit 2. Past a rotary model's bound
// (llama's max_position_embeddings) it runs with quality it was not trained for: a context-length finding,
// exit 1. Every command that takes --seq checks it (docs/OPTIONS.md).

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "api/options.h"
#include "api/plan_inputs.h"
#include "core/status.h"
#include "planner/findings.h"
#include "schemas/model_dims.h"

namespace easyplan::api {

/// `tokens` (given as `flag`: "--seq", "--max-length") against `dims`' context: BadInput past a learned
/// position table, a context-length finding past a rotary one, nullopt within it or when the family
/// declares no bound (or the config does not give one).
StatusOr<std::optional<planner::Finding>> ContextLengthFinding(const schemas::ModelDims& dims, int64_t tokens,
                                                               std::string_view flag);

/// ContextLengthFinding of a step's --seq and, when given, --max-length (serving's cache): BadInput past
/// a learned position table, else the findings (errors: callers put them first).
StatusOr<std::vector<planner::Finding>> ContextLengthFindings(const schemas::ModelDims& dims,
                                                              const MemoryOptions& options);

/// The same, with the dims of the inputs' resolved config.
StatusOr<std::vector<planner::Finding>> ContextLengthFindings(const PlanInputs& inputs, const MemoryOptions& options);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_CONTEXT_LENGTH_H_
