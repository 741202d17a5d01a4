#include "api/choices.h"

#include "core/did_you_mean.h"

namespace easyplan::api {

Status CheckChoice(const std::string& flag, const std::string& value, const std::vector<std::string>& choices) {
  for (const std::string& choice : choices) {
    if (value == choice) return Status();
  }
  std::string message = flag + " '" + value + "' is not supported";
  if (auto suggestion = SuggestClosest(value, choices)) message += " (did you mean '" + *suggestion + "'?)";
  return Status::BadInput({}, message, {"expected one of " + JoinQuoted(choices)});
}

}  // namespace easyplan::api
