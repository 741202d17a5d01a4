#ifndef EASYPLAN_API_SUGGEST_TEXT_H_
#define EASYPLAN_API_SUGGEST_TEXT_H_

// The terminal form of `easyplan suggest` (docs/COST.md). The JSON form is SuggestToJson (api/suggest.h).

#include <string>

#include "api/suggest.h"

namespace easyplan::api {

/// The search's header, the ranked candidates (the first `top`), why #1 beats #2, the Pareto front, the
/// rejections by count, what every candidate was priced under (the matmul line in brief unless
/// `verbose`) and the commands that reproduce each candidate.
std::string SuggestText(const SuggestOptions& options, const SuggestResult& result, bool verbose);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_SUGGEST_TEXT_H_
