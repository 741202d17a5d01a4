#include "api/environment.h"

#include <fmt/format.h>

#include "core/human.h"

namespace easyplan::api {

Environment Environment::Real() {
  Environment env;
  env.fs = std::make_shared<const RealFileSystem>();
  return env;
}

schemas::DataSource Environment::Data() const {
  return schemas_dir.empty() ? schemas::DataSource::Embedded() : schemas::DataSource::Directory(schemas_dir, *fs);
}

Status CheckOutputSize(std::string_view what, uint64_t bytes, bool estimated, const Limits& limits) {
  if (bytes <= limits.max_output_bytes) return Status();
  const int64_t shown = static_cast<int64_t>(std::min<uint64_t>(bytes, INT64_MAX));
  return Status::BadInput(
      {},
      fmt::format("{} {} {} bytes ({}), more than the limit of {} bytes", what, estimated ? "would be about" : "is",
                  WithThousands(shown), HumanBytesBinary(shown), limits.max_output_bytes),
      {LimitNote("--max-output-bytes", limits.max_output_bytes)});
}

Status CheckStepMicrobatches(std::string_view flag, int64_t microbatches, const Limits& limits) {
  if (microbatches <= limits.max_microbatch_count) return Status();
  return Status::BadInput({},
                          fmt::format("{} {} is more than the {} microbatches a step may have", flag, microbatches,
                                      limits.max_microbatch_count),
                          {LimitNote("--max-microbatch-count", static_cast<uint64_t>(limits.max_microbatch_count))});
}

}  // namespace easyplan::api
