#ifndef EASYPLAN_RULES_PRESETS_H_
#define EASYPLAN_RULES_PRESETS_H_

// eformer's partition presets and PartitionAxis tokens, loaded from rules/_presets.yaml, and the
// resolution of a rule's spec into mesh axes exactly as PartitionAxis.resolve_axis does
// (eformer/escale/partition/manager.py): tokens -> partition_axis attributes -> mesh axis names.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/document.h"
#include "core/json.h"
#include "core/mode.h"
#include "core/partition_spec.h"
#include "core/status.h"
#include "schemas/expression.h"
#include "schemas/schema_reader.h"

namespace easyplan::rules {

struct RuleSet;
struct SpecSource;

/// One entry of a preset or spec before resolution: EMPTY/None, or names (one = single, several =
/// a composite tuple), each a token or a literal mesh axis.
using AxesEntry = std::optional<std::vector<std::string>>;

struct Preset {
  std::vector<AxesEntry> axes;
  std::vector<std::pair<schemas::Expression, std::vector<AxesEntry>>> cases;  ///< first holding case wins
};

/// Parses a list of entries as the data files write them: null, a name, or a list of names
/// (`[batch, [fsdp, sp], null]`). Shared by _presets.yaml and _activations.yaml.
StatusOr<std::vector<AxesEntry>> ParseAxesEntries(const schemas::SchemaReader& reader, const Json& value,
                                                  const std::string& pointer);

class Presets {
 public:
  /// Parses rules/_presets.yaml.
  static StatusOr<Presets> Parse(std::string_view text, const std::string& path);
  /// The same from the parsed file (schemas::DataSource::ReadDocument).
  static StatusOr<Presets> Parse(const Document& doc);

  bool HasPreset(const std::string& name) const { return presets_.count(name) > 0; }
  std::vector<std::string> PresetNames() const;

  /// The token's canonical name for any spelling ("__HEAD__", "HEAD", "head"), or nullopt when
  /// `name` is not a token. The bare mesh-axis names dp/fsdp/tp/ep/sp are literals, not tokens.
  std::optional<std::string> CanonicalToken(const std::string& name) const;

  /// Resolves a spec source against the resolved config (its `partition_axis` and MoE flags):
  /// presets expand (their `cases` evaluated over `config`), tokens become the partition_axis
  /// attribute's value, literals stay mesh axis names. `trace` (optional) receives the steps, for
  /// `explain`. In a generation mode (decode, insert) a token whose partition_axis attribute has a
  /// generation variant (PartitionAxis.resolve_spec's GENERATION_MODES) takes that variant's value.
  /// Errors name the token or attribute.
  StatusOr<PartitionSpec> Resolve(const SpecSource& spec, const Json& config, Mode mode,
                                  std::vector<std::string>* trace = nullptr) const;

 private:
  std::map<std::string, Json> tokens_;  // canonical token -> attribute name (string) or null
  std::map<std::string, std::string> generation_;
  std::map<std::string, Preset> presets_;
  std::vector<std::string> preset_order_;
};

}  // namespace easyplan::rules

#endif  // EASYPLAN_RULES_PRESETS_H_
