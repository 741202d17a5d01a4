#ifndef EASYPLAN_API_COST_TEXT_H_
#define EASYPLAN_API_COST_TEXT_H_

// The terminal form of `cost` (and the figures of `suggest`'s candidates): seconds, rates and the
// step's breakdown. The JSON form is CostToJson (api/cost.h).

#include <string>

#include "api/cost.h"

namespace easyplan::api {

/// "1.23 s", "45.6 ms", "7.80 us": three significant figures in the unit that fits.
std::string HumanSeconds(double seconds);

/// "12,345": tokens per second rounded to a whole number.
std::string HumanRate(double per_second);

/// "41.3%": a fraction (MFU) as a percentage with one decimal.
std::string HumanPercent(double fraction);

/// `cost`'s table: the header, the totals, communication per kind, the costliest collectives and the
/// per-layer split.
/// `mode_given`: false when --mode took its default (train), which the header then says.
std::string CostText(const CostResult& result, bool mode_given = true, bool verbose = false);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_COST_TEXT_H_
