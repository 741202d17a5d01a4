#include "api/choices.h"

#include <algorithm>

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

Status CheckMode(const std::string& what, const std::string& mode, const std::vector<std::string>& accepted) {
  for (const std::string& choice : accepted) {
    if (mode == choice) return Status();
  }
  // The one set of modes every command draws from; each takes those that make sense for it.
  static const std::vector<std::string> kModes = {"train", "prefill", "decode", "insert", "serve"};
  std::string takes;
  for (size_t i = 0; i < accepted.size(); ++i) {
    takes += (i == 0 ? "" : i + 1 == accepted.size() ? " or " : ", ") + accepted[i];
  }
  std::string message;
  if (mode.empty()) {
    message = "--mode is empty: " + what + " takes " + takes;
  } else if (std::find(kModes.begin(), kModes.end(), mode) != kModes.end()) {
    message = "--mode " + mode + " is not one " + what + " takes: it takes " + takes;
  } else {
    message = "--mode '" + mode + "' is not a mode";
    if (auto suggestion = SuggestClosest(mode, accepted)) message += " (did you mean '" + *suggestion + "'?)";
    message += "; " + what + " takes " + takes;
  }
  return Status::BadInput({}, message,
                          {"the modes: train (a training step), prefill, decode and insert (the serving steps), "
                           "serve (prefill of the batch into the KV cache, then decode)"});
}

}  // namespace easyplan::api
