#include "api/context_length.h"

#include <fmt/format.h>

#include <string>
#include <utility>

namespace easyplan::api {

StatusOr<std::optional<planner::Finding>> ContextLengthFinding(const schemas::ModelDims& dims, int64_t tokens,
                                                               std::string_view flag) {
  if (dims.context_key.empty() || dims.context_limit <= 0 || tokens <= dims.context_limit) {
    return std::optional<planner::Finding>();
  }
  const std::string bound = fmt::format("{} ({})", dims.context_key, dims.context_limit);
  if (dims.learned_positions) {
    // modeling_gpt2.py: wpe = nn.Embedding(max_position_embeddings, ...): position p reads row p.
    return Status::BadInput(
        {},
        fmt::format("{} {} is past the model's {}: its positions are a learned table of {} rows, so a "
                    "sequence of {} tokens cannot run",
                    flag, tokens, bound, dims.context_limit, tokens),
        {fmt::format("expected {} at most {}", flag, dims.context_limit)});
  }
  planner::Finding finding{
      .code = planner::FindingCode::kContextLength,
      .severity = planner::FindingSeverity(planner::FindingCode::kContextLength),
      .message = fmt::format("{} {} is past the model's {}: rotary positions run past it, but the model was not "
                             "trained there and its quality degrades",
                             flag, tokens, bound),
      .notes = {fmt::format("use {} at most {}, or a config whose {} (with rope_scaling) covers the length", flag,
                            dims.context_limit, dims.context_key)}};
  return std::optional<planner::Finding>(std::move(finding));
}

StatusOr<std::vector<planner::Finding>> ContextLengthFindings(const schemas::ModelDims& dims,
                                                              const MemoryOptions& options) {
  std::vector<planner::Finding> found;
  for (const auto& [tokens, flag] :
       {std::pair<std::optional<int64_t>, std::string_view>{options.seq, "--seq"},
        std::pair<std::optional<int64_t>, std::string_view>{options.max_length, "--max-length"}}) {
    if (!tokens) continue;
    EP_ASSIGN_OR_RETURN(std::optional<planner::Finding> finding, ContextLengthFinding(dims, *tokens, flag));
    if (finding) found.push_back(std::move(*finding));
  }
  return found;
}

StatusOr<std::vector<planner::Finding>> ContextLengthFindings(const PlanInputs& inputs, const MemoryOptions& options) {
  EP_ASSIGN_OR_RETURN(const schemas::ModelDims dims, schemas::ModelDimsOf(inputs.resolved()));
  return ContextLengthFindings(dims, options);
}

}  // namespace easyplan::api
