#ifndef EASYPLAN_API_ENVIRONMENT_H_
#define EASYPLAN_API_ENVIRONMENT_H_

// Where a pipeline reads from: the file system, standard input (for a CONFIG of "-"), the data files
// (the copies built into the binary, or a checkout's schemas/ and rules/), and the limits on what it
// reads (core/limits.h). The CLI fills one from its flags; a library caller takes Environment::Real().

#include <functional>
#include <istream>
#include <memory>
#include <string>
#include <string_view>

#include "core/file_system.h"
#include "core/limits.h"
#include "core/status.h"
#include "schemas/data_source.h"

namespace easyplan::api {

struct Environment {
  std::shared_ptr<const FileSystem> fs;  ///< never null
  std::istream* in = nullptr;            ///< read for a CONFIG or tree of "-"; null: "-" is bad input
  std::string schemas_dir;               ///< "" = the data files built into the library
  Limits limits;
  /// Receives the warnings found after the config is resolved (a key given twice in a --rules file or a
  /// --hardware profile), once per file; null drops them. The CLI prints them to stderr.
  std::function<void(const Diag&)> warn;

  /// The real file system, no standard input, the built-in data files, default limits.
  static Environment Real();

  /// The data files of this environment.
  schemas::DataSource Data() const;
};

/// An artifact of `bytes` (estimated before it is built, else measured) against limits.max_output_bytes:
/// past it, bad input naming `what`, the size and the --max-output-bytes flag (docs/RELIABILITY.md).
Status CheckOutputSize(std::string_view what, uint64_t bytes, bool estimated, const Limits& limits);

/// A microbatch count (`flag`: --microbatches, or suggest's --max-microbatches) against
/// limits.max_microbatch_count: past it, bad input naming the flag, the count and --max-microbatch-count.
Status CheckStepMicrobatches(std::string_view flag, int64_t microbatches, const Limits& limits);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_ENVIRONMENT_H_
