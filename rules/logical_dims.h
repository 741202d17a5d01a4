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

namespace easyplan::schemas {
class SchemaReader;
}  // namespace easyplan::schemas

namespace easyplan::rules {

struct RE2SetHolder;

struct LogicalDim {
  std::string pattern;
  int dim = 0;  ///< negative counts from the end
  std::vector<std::string> count_keys;
  std::string what;  ///< "attention heads"
  SourceLoc loc;
};

/// A dim that holds several parts one after another (transformers' Phi-3 qkv_proj: rows q, then k,
/// then v): part k's share of the dim is its count over the sum of the counts.
struct FusedDim {
  std::string pattern;
  int dim = 0;                          ///< negative counts from the end
  std::vector<std::string> names;       ///< "q", "k", "v"
  std::vector<std::string> count_keys;  ///< one config key per part
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

  /// The first fused dim whose pattern occurs in `name`, or nullptr.
  const FusedDim* FindFused(std::string_view name) const;

  /// The part sizes of `fused` in elements of a dim of `size`, or empty when a count is missing or the
  /// counts do not divide the size.
  static std::vector<int64_t> FusedPartSizes(const FusedDim& fused, int64_t size, const Json& config);

  /// True when no pattern can tell two digits of a number component apart (IsNumberBlind), so a name
  /// and its NumberShape find the same entry.
  bool number_blind() const { return number_blind_; }

  /// The entry's count under `config`: the first of its keys holding an integer, or nullopt.
  static std::optional<int64_t> Count(const LogicalDim& dim, const Json& config);

 private:
  LogicalDims() = default;
  static Status ParseFused(const Document& doc, schemas::SchemaReader& reader, LogicalDims& dims);
  std::vector<LogicalDim> dims_;
  std::vector<FusedDim> fused_;
  std::vector<std::unique_ptr<re2::RE2>> fused_patterns_;  // one per fused_ entry (a handful)
  bool number_blind_ = true;
  std::unique_ptr<RE2SetHolder> set_;  // every pattern in one RE2::Set: one pass per name
};

}  // namespace easyplan::rules

#endif  // EASYPLAN_RULES_LOGICAL_DIMS_H_
