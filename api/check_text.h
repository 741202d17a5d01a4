#ifndef EASYPLAN_API_CHECK_TEXT_H_
#define EASYPLAN_API_CHECK_TEXT_H_

// The terminal form of `easyplan check` (docs/CHECK.md). The JSON form is CheckToJson (api/check.h).

#include <string>

#include "api/check.h"

namespace easyplan::api {

/// The layout check, the numeric check, the communication per scope, the memory and activation
/// comparisons, and the verdict line. Every figure passes the non-finite guard (core/human.h): a NaN is a
/// NonFiniteFigure naming it, never "nan" in a report.
std::string CheckText(const CheckRun& run);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_CHECK_TEXT_H_
