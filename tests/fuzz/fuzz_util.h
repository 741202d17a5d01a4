#ifndef EASYPLAN_TESTS_FUZZ_FUZZ_UTIL_H_
#define EASYPLAN_TESTS_FUZZ_FUZZ_UTIL_H_

// Helpers shared by the libFuzzer targets: a property check that aborts (libFuzzer then saves the
// input as a crash artifact) and the checks every parser's result must pass.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/json.h"
#include "core/status.h"

namespace easyplan::fuzz {

/// Aborts with `what` when `condition` is false: a broken invariant is a finding like a crash.
inline void Check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz property violated: %s\n", what);
    std::abort();
  }
}

/// A failed Status from bad input must be BadInput (exit 2) with a message; anything else would be
/// an internal error (exit 3) on user input.
inline void CheckBadInput(const Status& status) {
  if (status.ok()) return;
  Check(status.kind() == ErrorKind::kBadInput, "user input produced a non-BadInput error");
  Check(!status.diag().message.empty(), "error without a message");
}

/// Whether every float in `value` is finite and every string valid UTF-8: such values survive a
/// round trip through text unchanged (NaN != NaN; invalid UTF-8 is replaced on output).
inline bool RoundTrippable(const Json& value) {
  if (value.is_number_float()) return std::isfinite(value.get<double>());
  if (value.is_string()) {
    try {
      (void)value.dump(-1, ' ', false, Json::error_handler_t::strict);
      return true;
    } catch (...) {
      return false;
    }
  }
  if (value.is_object()) {
    for (const auto& [key, item] : value.items()) {
      if (!RoundTrippable(Json(key)) || !RoundTrippable(item)) return false;
    }
  }
  if (value.is_array()) {
    for (const Json& item : value) {
      if (!RoundTrippable(item)) return false;
    }
  }
  return true;
}

}  // namespace easyplan::fuzz

#endif  // EASYPLAN_TESTS_FUZZ_FUZZ_UTIL_H_
