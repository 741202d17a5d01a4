#ifndef EASYPLAN_PLANNER_RUNTIME_MODES_H_
#define EASYPLAN_PLANNER_RUNTIME_MODES_H_

// What one runtime mode resolves, raw: OperationMetadata.get_shardings(mode, layout, qkv_mni_sharding,
// softmax_aux) of EasyDeL (easydel/operations/_operation_meta.py) resolves every AttnShardingRules
// field through partition_axis with no shape and no mesh, so size-1 and unknown axes stay. The first of
// the three layers planner/activations.h describes.
//
// Modes: train and prefill resolve with the train rules, decode and insert with the decode_* fields
// (a decode_* of null falls back to the train field; an empty list means unsharded).

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/json.h"
#include "core/mode.h"
#include "core/partition_spec.h"
#include "core/status.h"
#include "planner/activation_table.h"
#include "rules/presets.h"

namespace easyplan::planner {

enum class AttnLayout { kBthd, kBhtd };
std::string_view AttnLayoutName(AttnLayout layout);
/// "bthd" or "bhtd". "thd" is a BadInput, as get_shardings raises NotImplementedError for it.
StatusOr<AttnLayout> ParseAttnLayout(std::string_view text);

/// `axes` resolved through the config's partition_axis in `mode`, canonicalised as JAX does (an empty
/// string, an empty list or null is None). No shape, no mesh: nothing is dropped.
StatusOr<PartitionSpec> ResolveAxes(const ActivationTable::Axes& axes, const rules::Presets& presets,
                                    const Json& config, Mode mode);

/// The ten fields of EasyDeL's AttnShardingRules.
struct AttnShardingRules {
  PartitionSpec query3d, query, key, value, bias, mask, output, q_segment_ids, kv_segment_ids;
  std::optional<PartitionSpec> softmax_aux;  ///< nullopt when no softmax aux is given
};

struct AttnOptions {
  Mode mode = Mode::kTrain;
  AttnLayout layout = AttnLayout::kBthd;
  bool qkv_mni = false;
  std::optional<int> softmax_aux_ndim;  ///< the rank of the softmax aux, if there is one
};

/// OperationMetadata.get_shardings: every field resolved raw for the mode, layout and flags.
StatusOr<AttnShardingRules> GetShardings(const ActivationTable& table, const rules::Presets& presets,
                                         const Json& config, const AttnOptions& options);

/// The fields in AttnShardingRules order with their names ("query3d", ..., "softmax_aux").
std::vector<std::pair<std::string, const PartitionSpec*>> AttnFields(const AttnShardingRules& rules);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_RUNTIME_MODES_H_
