#ifndef EASYPLAN_PLANNER_ATTENTION_KERNELS_H_
#define EASYPLAN_PLANNER_ATTENTION_KERNELS_H_

// The attention kernels of easydel/operations/kernels/ as rules/_activations.yaml describes them: which
// one a run selects (--kernel, or the config's attn_mechanism and decode_attn_mechanism), the mode it
// recomputes from the query's shape (its own get_mode), the layout and qkv_mni it asks get_shardings
// for, and the specs create_stable_sharding hands to shard_map.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/mesh.h"
#include "core/partition_spec.h"
#include "core/shape.h"
#include "core/status.h"
#include "planner/activation_table.h"
#include "planner/kv_cache.h"
#include "planner/runtime_modes.h"
#include "rules/presets.h"

namespace easyplan::planner {

/// One spec an attention kernel hands to shard_map (vanilla: constrains); easydel/operations/kernels/.
struct KernelSpecReport {
  std::string name;            ///< "query", "key", "cu_seqlens", "starts", ...
  PartitionSpec spec;          ///< create_stable_sharding's spec: kept dims of the field, the rest None
  PartitionSpec applied;       ///< corrected against `shape` when the kernel passes the tensor and shapes are known
  std::optional<Shape> shape;  ///< the tensor it is corrected against, with --batch/--seq
  bool corrected = false;      ///< the kernel passes a tensor, so eformer's correction applies
};

/// What one attention kernel (easydel/operations/kernels/*.py) does with the shardings: the mode it recomputes from the
/// query's shape, the layout and qkv_mni it asks get_shardings for, and the specs it hands to shard_map.
struct KernelReport {
  std::string name;          ///< easyplan's name: vanilla, flash_attn2, sdpa, ring, blocksparse, decode, paged_flash
  std::string easydel_name;  ///< the attn_mechanism value (autoregressive_decodeattn, ...)
  std::string selected_by;   ///< "--kernel", "attn_mechanism" or "decode_attn_mechanism"
  int mode_dim = 1;          ///< get_mode tests query.shape[mode_dim] == 1
  std::optional<int64_t> tested;    ///< that size, when known (decode: 1; ring/blocksparse: the heads)
  Mode kernel_mode = Mode::kTrain;  ///< train or decode: never prefill or insert
  AttnLayout layout = AttnLayout::kBthd;
  bool qkv_mni = false;
  bool shard_map = true;
  bool transposed = false;
  std::vector<KernelSpecReport> specs;
};

/// The EasyDeL kernel names `--kernel` takes besides easyplan's own (all of _activations.yaml's kernels).
std::vector<std::string> KernelNames(const ActivationTable& table);

/// The kernel a run uses: `requested` (--kernel; BadInput when it is not one easyplan models), else
/// FlexibleAttentionModule's choice: decode_attn_mechanism in decode when it is set, else attn_mechanism
/// (vanilla when unset). Sets `easydel_name` and `selected_by`. Null, with `note` saying why, for "auto"
/// and for a kernel easyplan does not model.
StatusOr<const ActivationTable::Kernel*> SelectKernel(const ActivationTable& table, const Json& config, Mode mode,
                                                      const std::string& requested, std::string* easydel_name,
                                                      std::string* selected_by, std::string* note);

/// The step a kernel report is for.
struct KernelStep {
  Mode mode = Mode::kTrain;  ///< the runtime mode asked for
  std::optional<int> softmax_aux_ndim;
  std::optional<int64_t> batch, seq;  ///< --batch/--seq: with both, the specs are corrected for the shapes
  int64_t query_length = 0;           ///< 1 in decode, else seq
  int64_t heads = 0;                  ///< num_attention_heads; 0 when the config has none
};

/// What `kernel` does with the shardings for the step's query and key shapes (keys and values of
/// `geometry`). BadInput: a decode-only kernel asked to run a query longer than one token.
StatusOr<KernelReport> BuildKernelReport(const ActivationTable& table, const rules::Presets& presets,
                                         const Json& config, const Mesh& mesh, const ActivationTable::Kernel& kernel,
                                         const KernelStep& step, const CacheGeometry& geometry);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_ATTENTION_KERNELS_H_
