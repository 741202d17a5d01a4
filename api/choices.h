#ifndef EASYPLAN_API_CHOICES_H_
#define EASYPLAN_API_CHOICES_H_

#include <string>
#include <vector>

#include "core/status.h"

namespace easyplan::api {

/// "--format 'xml' is not supported (did you mean ...)" unless `value` is one of `choices`.
Status CheckChoice(const std::string& flag, const std::string& value, const std::vector<std::string>& choices);

/// --mode against the modes `what` (a command: "memory") takes, drawn from the one set train, prefill,
/// decode, insert; --mode serve is retired; the error names the ones it takes.
Status CheckMode(const std::string& what, const std::string& mode, const std::vector<std::string>& accepted);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_CHOICES_H_
