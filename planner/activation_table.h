#ifndef EASYPLAN_PLANNER_ACTIVATION_TABLE_H_
#define EASYPLAN_PLANNER_ACTIVATION_TABLE_H_

// rules/_activations.yaml as a value: the logical axes EasyDeL gives each AttnShardingRules field, the
// residual-stream presets, the KV cache and the MoE specs. Data only; planner/activations.h resolves it.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "rules/presets.h"

namespace easyplan::planner {

/// rules/_activations.yaml: the logical axes of each activation EasyDeL constrains.
class ActivationTable {
 public:
  using Axes = std::vector<rules::AxesEntry>;

  /// An AttnShardingRules field: axes per variant ("bthd", "bhtd", "bthd_mni", "axes", "ndim2", ...).
  struct AttnField {
    std::string name;
    std::map<std::string, Axes> variants;
    std::string same_as;  ///< the spec of another field (output is query's very spec)
  };
  struct ResidualEntry {
    std::string name;
    Axes axes;
    std::optional<int> dynamic_dim;  ///< eformer's integer mode: decode rules iff shape[dim] == 1
    bool train_only = false;         ///< only constrained by the training loss
  };
  /// A fused-MoE spec on the expert mesh, entries being the roles "dp", "ep", "tp" or None.
  struct FusedEntry {
    std::string name;
    std::vector<std::optional<std::string>> standard;
    std::vector<std::optional<std::string>> expert_tensor;
  };

  static StatusOr<ActivationTable> Parse(std::string_view text, const std::string& path);

  const std::vector<AttnField>& attention() const { return attention_; }
  const std::vector<ResidualEntry>& residual() const { return residual_; }
  const std::vector<std::pair<std::string, Axes>>& kv_cache() const { return kv_cache_; }
  const std::vector<std::string>& expert_count_keys() const { return expert_count_keys_; }
  const std::vector<FusedEntry>& fused() const { return fused_; }
  const Axes& model_output(bool expert_tensor) const { return expert_tensor ? model_output_etm_ : model_output_; }

  const ResidualEntry* FindResidual(std::string_view name) const;
  const Axes* FindCache(std::string_view name) const;

 private:
  std::vector<AttnField> attention_;
  std::vector<ResidualEntry> residual_;
  std::vector<std::pair<std::string, Axes>> kv_cache_;
  std::vector<std::string> expert_count_keys_;
  std::vector<FusedEntry> fused_;
  Axes model_output_, model_output_etm_;
};

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_ACTIVATION_TABLE_H_
