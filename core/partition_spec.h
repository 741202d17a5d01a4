#ifndef EASYPLAN_CORE_PARTITION_SPEC_H_
#define EASYPLAN_CORE_PARTITION_SPEC_H_

#include <memory>
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
  explicit PartitionSpec(std::vector<Entry> entries);

  int size() const { return entries_ ? static_cast<int>(entries_->size()) : 0; }
  bool empty() const { return size() == 0; }
  const Entry& operator[](int dim) const { return (*entries_)[static_cast<size_t>(dim)]; }
  const std::vector<Entry>& entries() const { return entries_ ? *entries_ : NoEntries(); }

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

  friend bool operator==(const PartitionSpec& a, const PartitionSpec& b) {
    return a.entries_ == b.entries_ || a.entries() == b.entries();
  }

 private:
  static const std::vector<Entry>& NoEntries();

  // Immutable and shared, so copies are cheap: a plan hands one resolved spec to thousands of
  // parameters. P() holds no vector at all.
  std::shared_ptr<const std::vector<Entry>> entries_;
};

}  // namespace easyplan

#endif  // EASYPLAN_CORE_PARTITION_SPEC_H_
