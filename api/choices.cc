#include "api/choices.h"

#include <algorithm>

#include "core/did_you_mean.h"
#include "core/mode.h"

namespace easyplan::api {

Status CheckChoice(const std::string& flag, const std::string& value, const std::vector<std::string>& choices) {
  for (const std::string& choice : choices) {
    if (value == choice) return Status();
  }
  std::string message = flag + " '" + value + "' is not supported";
  if (auto suggestion = SuggestClosest(value, choices)) message += " (did you mean '" + *suggestion + "'?)";
  return Status::BadInput({}, message, {"expected one of " + JoinQuoted(choices)});
}

Status CheckMode(const std::string& what, const std::string& mode, const std::vector<std::string>& accepted) {
  for (const std::string& choice : accepted) {
    if (mode == choice) return Status();
  }
  std::string takes;
  for (size_t i = 0; i < accepted.size(); ++i) {
    takes += (i == 0 ? "" : i + 1 == accepted.size() ? " or " : ", ") + accepted[i];
  }
  if (mode == "serve") {
    // Retired by issue 46: it named prefill's step in some commands and "prefill, then decode at the cache
    // length" in others.
    return Status::BadInput({}, "--mode serve is retired: " + what + " takes " + takes,
                            {"--mode prefill is the step serve priced and measured (the prompts into the KV cache); "
                             "--mode decode is one new token per sequence against a cache of --seq tokens, allocated "
                             "for --max-length"});
  }
  std::string message;
  if (mode.empty()) {
    message = "--mode is empty: " + what + " takes " + takes;
  } else if (ParseMode(mode) && ModeName(*ParseMode(mode)) == mode) {  // core/mode.h's, which every command draws from
    message = "--mode " + mode + " is not one " + what + " takes: it takes " + takes;
  } else {
    message = "--mode '" + mode + "' is not a mode";
    if (auto suggestion = SuggestClosest(mode, accepted)) message += " (did you mean '" + *suggestion + "'?)";
    message += "; " + what + " takes " + takes;
  }
  return Status::BadInput({}, message,
                          {"the modes: train (a training step), prefill, decode and insert (the serving steps)"});
}

}  // namespace easyplan::api
