#ifndef EASYPLAN_CORE_PARTITION_SPEC_H_
#define EASYPLAN_CORE_PARTITION_SPEC_H_

#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/status.h"

namespace easyplan {

/// A jax.sharding.PartitionSpec over mesh axis names, canonical as JAX keeps it: each entry is
/// None (no axes), one axis, or a tuple of axes (major to minor). A 1-tuple is the single axis
/// (JAX canonicalises ('x',) to 'x'). P() (no entries) and P(None) (one unsharded entry) differ:
/// they print, export and match differently, though both replicate.
class PartitionSpec {
 public:
  using Entry = std::vector<std::string>;  // empty = None

  PartitionSpec() = default;
  explicit PartitionSpec(std::vector<Entry> entries) : entries_(std::move(entries)) {}

  int size() const { return static_cast<int>(entries_.size()); }
  bool empty() const { return entries_.empty(); }
  const Entry& operator[](int dim) const { return entries_[static_cast<size_t>(dim)]; }
  const std::vector<Entry>& entries() const { return entries_; }

  /// Every axis named anywhere, in order of appearance (duplicates kept, for the duplicate check).
  std::vector<std::string> AllAxes() const;

  /// True when no entry names an axis (P(), P(None), P(None, None)).
  bool IsReplicated() const;

  /// "P(('fsdp', 'sp'), 'tp')", "P(None)", "P()": the Python repr, for messages and exports.
  std::string ToString() const;

  /// [["fsdp", "sp"], "tp"] with null for None: the JSON form of plan output and rule files.
  Json ToJson() const;

  /// Parses the JSON form: a list whose items are null, an axis name or a list of axis names.
  /// `[]` is P(); `[null]` is P(None). Errors (BadInput, no location) say what was found.
  static StatusOr<PartitionSpec> FromJson(const Json& json);

  friend bool operator==(const PartitionSpec&, const PartitionSpec&) = default;

 private:
  std::vector<Entry> entries_;
};

}  // namespace easyplan

#endif  // EASYPLAN_CORE_PARTITION_SPEC_H_
