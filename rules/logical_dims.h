#ifndef EASYPLAN_RULES_LOGICAL_DIMS_H_
#define EASYPLAN_RULES_LOGICAL_DIMS_H_

// Which tensor dims count heads, kv heads, experts or vocabulary entries (rules/_logical_dims.yaml), so a
// spec that shards such a dim can be checked against the count and not only against the dim's size.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/document.h"
#include "core/json.h"
#include "core/status.h"

namespace re2 {
class RE2;
}  // namespace re2

namespace easyplan::rules {

struct RE2SetHolder;

struct LogicalDim {
  std::string pattern;
  int dim = 0;  ///< negative counts from the end
  std::vector<std::string> count_keys;
  std::string what;  ///< "attention heads"
  SourceLoc loc;
};

class LogicalDims {
 public:
  static StatusOr<LogicalDims> Parse(std::string_view text, const std::string& path);
  /// The same from the parsed file (schemas::DataSource::ReadDocument).
  static StatusOr<LogicalDims> Parse(const Document& doc);
  LogicalDims(LogicalDims&&) noexcept;
  LogicalDims& operator=(LogicalDims&&) noexcept;
  ~LogicalDims();

  /// The first entry whose pattern occurs in `name`, or nullptr.
  const LogicalDim* Find(std::string_view name) const;

  /// True when no pattern can tell two digits of a number component apart (IsNumberBlind), so a name
  /// and its NumberShape find the same entry.
  bool number_blind() const { return number_blind_; }

  /// The entry's count under `config`: the first of its keys holding an integer, or nullopt.
  static std::optional<int64_t> Count(const LogicalDim& dim, const Json& config);

 private:
  LogicalDims() = default;
  std::vector<LogicalDim> dims_;
  bool number_blind_ = true;
  std::unique_ptr<RE2SetHolder> set_;  // every pattern in one RE2::Set: one pass per name
};

}  // namespace easyplan::rules

#endif  // EASYPLAN_RULES_LOGICAL_DIMS_H_
