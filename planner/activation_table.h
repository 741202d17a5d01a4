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

#include "core/document.h"
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

  /// One spec an attention kernel hands to shard_map (or constrains, for vanilla); easydel/operations/kernels/.
  struct KernelSpec {
    std::string name;                      ///< "query", "cu_seqlens", "starts", ...
    std::string field;                     ///< the AttnShardingRules field it starts from ("" = none)
    std::optional<std::vector<int>> keep;  ///< preserved_indices; nullopt = the whole spec
    std::vector<int> pick;                 ///< a new spec of these entries of `field` (P(query[0]))
    int rank = 0;                          ///< without a field: this many Nones
    bool flatten = false;                  ///< the 1-D spec of a flattened tensor (softmax_aux)
    std::string tensor;                    ///< the shape it is corrected against ("" = not corrected)
  };
  /// An attention kernel of easydel/operations/kernels/.
  struct Kernel {
    std::string name;                  ///< easyplan's name ("flash_attn2", "decode", ...)
    std::vector<std::string> easydel;  ///< the attn_mechanism values that select it
    int mode_dim = 1;                  ///< get_mode tests query.shape[mode_dim] == 1
    std::string layout = "bthd";
    bool qkv_mni = false;
    bool shard_map = true;  ///< false: with_sharding_constraint of the full specs (vanilla)
    bool corrected = true;  ///< false: create_stable_sharding gets no tensor, so no correction
    bool transposed = false;
    bool decode_only = false;
    std::string error;  ///< what EasyDeL raises outside decode
    std::vector<KernelSpec> specs;
  };
  /// RaggedPagesCache (easydel/caching/ragged_page/cache.py): the tokens of kv_pages' page and head-group axes and the
  /// kernel's specs.
  struct RaggedCacheAxes {
    Axes page, head_group;
    std::string shard_count_from;     ///< the partition_axis attribute whose mesh size is kv_head_shards
    std::vector<std::string> upcast;  ///< v3: the dtypes tried, in order, when the groups do not split
    Axes query, kv, sinks;
  };

  static StatusOr<ActivationTable> Parse(std::string_view text, const std::string& path);
  /// The same from the parsed file (schemas::DataSource::ReadDocument).
  static StatusOr<ActivationTable> Parse(const Document& doc);

  const std::vector<AttnField>& attention() const { return attention_; }
  const std::vector<ResidualEntry>& residual() const { return residual_; }
  const std::vector<std::pair<std::string, Axes>>& kv_cache() const { return kv_cache_; }
  const std::vector<FusedEntry>& fused() const { return fused_; }
  const Axes& model_output(bool expert_tensor) const { return expert_tensor ? model_output_etm_ : model_output_; }
  const std::vector<Kernel>& kernels() const { return kernels_; }
  const RaggedCacheAxes& ragged_cache() const { return ragged_cache_; }
  /// The kernel named `name` (easyplan's name or one of its EasyDeL names), or nullptr.
  const Kernel* FindKernel(std::string_view name) const;

  const ResidualEntry* FindResidual(std::string_view name) const;
  const Axes* FindCache(std::string_view name) const;

 private:
  std::vector<AttnField> attention_;
  std::vector<ResidualEntry> residual_;
  std::vector<std::pair<std::string, Axes>> kv_cache_;
  std::vector<FusedEntry> fused_;
  Axes model_output_, model_output_etm_;
  std::vector<Kernel> kernels_;
  RaggedCacheAxes ragged_cache_;
};

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_ACTIVATION_TABLE_H_
