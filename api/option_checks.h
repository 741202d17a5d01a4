#ifndef EASYPLAN_API_OPTION_CHECKS_H_
#define EASYPLAN_API_OPTION_CHECKS_H_

// The checks the command table declares for each option (api/option_table.cc), for the pipelines'
// own option checks (CheckPlanOptions, CheckMemoryOptions, ...): a caller that fills the option
// structs directly gets the message a CLI flag or a Python keyword gets, written once.

#include <string_view>

#include "core/json.h"
#include "core/status.h"

namespace easyplan::api {

/// The declared check of option `id` (its id in the table: "batch", "attention_layout", ...) on
/// `value`, as `command` reads it (its variant's choices: activations' --mode takes insert). The value's
/// type must be the option's; a wrong one is bad input naming it.
Status CheckOptionValue(std::string_view id, const Json& value, std::string_view command = "");

}  // namespace easyplan::api

#endif  // EASYPLAN_API_OPTION_CHECKS_H_
