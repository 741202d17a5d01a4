#ifndef EASYPLAN_PLANNER_ACTIVATIONS_H_
#define EASYPLAN_PLANNER_ACTIVATIONS_H_

// The other half of a sharding plan: the specs EasyDeL gives what flows between the parameters in
// one runtime mode (EasyDeL easydel/operations/_operation_meta.py and its callers). Three layers, kept apart as EasyDeL
// keeps them:
//
//  1. resolution, raw: OperationMetadata.get_shardings(mode, layout, qkv_mni_sharding, softmax_aux)
//     resolves every AttnShardingRules field through partition_axis with no shape and no mesh, so
//     size-1 and unknown axes stay (GetShardings);
//  2. application: eformer's shape correction of each spec against a tensor (planner/layout.h
//     CorrectSpec, --uneven replicate), and the KV cache's own sanitiser (both K and V must divide);
//  3. geometry: with --batch/--seq, the global and per-device shapes and bytes, and findings where a
//     dim is not divisible by its axes.
//
// Modes: train and prefill resolve with the train rules, decode and insert with the decode_* fields
// (a decode_* of null falls back to the train field; an empty list means unsharded).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/json.h"
#include "core/mesh.h"
#include "core/partition_spec.h"
#include "core/shape.h"
#include "core/status.h"
#include "planner/activation_table.h"
#include "planner/expert_mesh.h"
#include "planner/findings.h"
#include "rules/presets.h"
#include "schemas/model_dims.h"

namespace easyplan::planner {

enum class RuntimeMode { kTrain, kPrefill, kDecode, kInsert };

/// "train", "prefill", "decode", "insert".
std::string_view RuntimeModeName(RuntimeMode mode);
/// EasyDeL's constant: "__train__", "__prefill__", "__autoregressive__", "__insert__".
std::string_view RuntimeModeConstant(RuntimeMode mode);
/// Accepts the names above and EasyDeL's constants.
std::optional<RuntimeMode> ParseRuntimeMode(std::string_view text);
/// Decode and insert are eformer's GENERATION_MODES; prefill is not.
bool IsGenerationMode(RuntimeMode mode);
rules::AxisMode AxisModeOf(RuntimeMode mode);

enum class AttnLayout { kBthd, kBhtd };
std::string_view AttnLayoutName(AttnLayout layout);
/// "bthd" or "bhtd". "thd" is a BadInput, as get_shardings raises NotImplementedError for it.
StatusOr<AttnLayout> ParseAttnLayout(std::string_view text);

/// `axes` resolved through the config's partition_axis in `mode`, canonicalised as JAX does (an empty
/// string, an empty list or null is None). No shape, no mesh: nothing is dropped.
StatusOr<PartitionSpec> ResolveAxes(const ActivationTable::Axes& axes, const rules::Presets& presets,
                                    const Json& config, rules::AxisMode mode);

/// The ten fields of EasyDeL's AttnShardingRules.
struct AttnShardingRules {
  PartitionSpec query3d, query, key, value, bias, mask, output, q_segment_ids, kv_segment_ids;
  std::optional<PartitionSpec> softmax_aux;  ///< nullopt when no softmax aux is given
};

struct AttnOptions {
  RuntimeMode mode = RuntimeMode::kTrain;
  AttnLayout layout = AttnLayout::kBthd;
  bool qkv_mni = false;
  std::optional<int> softmax_aux_ndim;  ///< the rank of the softmax aux, if there is one
};

/// OperationMetadata.get_shardings: every field resolved raw for the mode, layout and flags.
StatusOr<AttnShardingRules> GetShardings(const ActivationTable& table, const rules::Presets& presets,
                                         const Json& config, const AttnOptions& options);

/// The fields in AttnShardingRules order with their names ("query3d", ..., "softmax_aux").
std::vector<std::pair<std::string, const PartitionSpec*>> AttnFields(const AttnShardingRules& rules);

/// _sanitize_sharding_axes_for_shape of the TransformerCache for every shape in `shapes` at once: an
/// entry is kept only when its mesh sizes' product divides the dim in every shape. An axis name the
/// mesh lacks makes EasyDeL raise KeyError: it is returned in `unknown_axis`.
PartitionSpec SanitizeCacheSpec(const PartitionSpec& spec, const std::vector<Shape>& shapes, const Mesh& mesh,
                                std::string* unknown_axis);

/// Two specs that lay a tensor out identically on `mesh` (size-1 axes dropped, trailing Nones trimmed):
/// what XLA compares, so P(('fsdp', 'dp')) and P('dp') are the same layout when fsdp = 1.
bool SameLayout(const PartitionSpec& a, const PartitionSpec& b, const Mesh& mesh);

/// The MoE side of a config: expert count, expert mesh, the stacked expert kernels' parameter specs
/// (get_moe_partition_spec with module_view=True, on the model mesh) and the fused path's specs.
struct ExpertSpecs {
  int64_t experts = 0;
  bool expert_tensor_mode = false;
  PartitionSpec column, row, bias;                           ///< on the model mesh
  std::vector<std::pair<std::string, PartitionSpec>> fused;  ///< on the expert mesh
  PartitionSpec model_output;                                ///< after the block, on the model mesh
};

/// Expert specs of a MoE config with `experts` routed experts (schemas::ModelDims::experts); nullopt for
/// a dense one (0 experts).
StatusOr<std::optional<ExpertSpecs>> GetExpertSpecs(const ActivationTable& table, const rules::Presets& presets,
                                                    const Json& config, int64_t experts, const ExpertMesh& expert_mesh);

/// Findings about the expert mesh: a reshape EasyDeL cannot do, expert-tensor mode with tp > 1, experts
/// the folded ep does not divide.
std::vector<Finding> ExpertMeshFindings(const ExpertMesh& expert_mesh, const std::optional<ExpertSpecs>& specs);

/// The geometry of one layer's cache, from the model's dims as create_transformer_cache_config reads
/// them: MLA keeps every head with its own key and value widths; otherwise kv heads of head_dim, and
/// sliding_window on the layers layer_types marks sliding (on every layer when there are no layer types,
/// unless use_sliding_window is false).
///
/// Layer types change what a layer stores: a chunked layer (Llama 4) keeps attention_chunk_size tokens
/// as transformers' HybridChunkedCache does, a linear-attention layer (Qwen3-Next) no keys or values but
/// a fixed-size state (LinearStateGeometry).
struct LinearStateGeometry {
  int64_t layers = 0;
  /// The causal conv1d's last inputs, [B, conv_dim, kernel] with conv_dim = 2 x key heads x key dim +
  /// value heads x value dim (q, k and v are convolved together); the delta rule's state,
  /// [B, value heads, key dim, value dim], float32 (modeling_qwen3_next.py computes it in float32).
  int64_t conv_dim = 0, conv_kernel = 0, value_heads = 0, key_dim = 0, value_dim = 0;
};
struct CacheGeometry {
  int64_t key_heads = 1, key_dim = 1, value_heads = 1, value_dim = 1;
  int64_t layers = 0;            ///< every decoder layer
  int64_t kv_layers = 0;         ///< the layers that keep keys and values (all but linear-attention ones)
  std::vector<int64_t> sliding;  ///< per layer: the window (sliding or chunked), or 0 for a full-length layer
  std::vector<bool> chunked;     ///< per layer: the window is attention_chunk_size
  std::vector<bool> linear;      ///< per layer: linear attention, no keys or values
  LinearStateGeometry linear_state;
  bool mla = false;
};
CacheGeometry CacheGeometryOf(const schemas::ModelDims& dims);

/// Whether an activation row is part of the cache a serving step keeps (kv_cache.*, ragged_cache.*,
/// linear_state.*): those rows carry a layer count.
bool IsCacheRow(std::string_view name);

/// One activation laid on the mesh.
struct ActivationTensor {
  std::string name;  ///< "attention.query", "hidden_state", "kv_cache.key", ...
  Shape shape;
  DType dtype = DType::kBFloat16;
  PartitionSpec spec;       ///< raw, as EasyDeL resolves it
  PartitionSpec effective;  ///< as applied to this shape
  Shape shard_shape;
  int64_t bytes = 0;             ///< global bytes of one tensor
  int64_t bytes_per_device = 0;  ///< of the largest shard
  int64_t layers = 0;            ///< KV cache rows: how many layers hold this tensor (0 otherwise)
  int64_t window = 0;            ///< KV cache rows of sliding layers: the window
};

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
  std::optional<int64_t> tested;                  ///< that size, when known (decode: 1; ring/blocksparse: the heads)
  RuntimeMode kernel_mode = RuntimeMode::kTrain;  ///< train or decode: never prefill or insert
  AttnLayout layout = AttnLayout::kBthd;
  bool qkv_mni = false;
  bool shard_map = true;
  bool transposed = false;
  std::vector<KernelSpecReport> specs;
};

/// The EasyDeL kernel names `--kernel` takes besides easyplan's own (all of _activations.yaml's kernels).
std::vector<std::string> KernelNames(const ActivationTable& table);

/// RaggedPagesCache (eSurge, easydel/caching/ragged_page/cache.py) options. num_pages is an input: EasyDeL sizes it
/// from the free HBM at run time.
struct RaggedCacheOptions {
  int version = 3;  ///< 2 or 3
  int64_t page_size = 128;
  int64_t num_pages = 0;
};

/// One layer's kv_pages tensor (K and V packed together) and the ragged kernel's specs.
struct RaggedCacheReport {
  RaggedCacheOptions options;
  int64_t kv_heads = 0, head_dim = 0, layers = 0;
  DType requested_dtype = DType::kBFloat16;                               ///< the config's kvdtype
  DType dtype = DType::kBFloat16;                                         ///< the storage dtype (v3 may upcast it)
  int64_t packing = 1, combined_heads = 0, groups = 0, head_dim_pad = 0;  ///< v3 geometry
  int64_t dp_size = 1;                                                    ///< the mesh size of the page axis's token
  int64_t kv_head_axis_size = 1;            ///< the mesh size of kv_head_axis: the shard count asked for
  int64_t kv_head_shards = 1;               ///< after the v2 replication rule / v3 upcast search
  bool upcast = false;                      ///< v3 changed the dtype so the groups split
  bool heads_replicated = false;            ///< kv_head_axis asked for shards that do not fit
  ActivationTensor pages;                   ///< kv_pages of one layer (layers = all of them)
  int64_t bytes = 0, bytes_per_device = 0;  ///< all layers
  PartitionSpec query, kv, sinks;           ///< ragged_page_attention's token-major specs
};

struct ActivationRequest {
  const ActivationTable* table = nullptr;
  const rules::Presets* presets = nullptr;
  /// The resolved geometry config (schemas::GeometryConfig: its text_config for multimodal families),
  /// read for partition_axis and EasyDeL's settings (attn_mechanism, kvdtype, use_sharded_kv_caching, ...).
  const Json* config = nullptr;
  const schemas::ModelDims* dims = nullptr;  ///< the model's geometry, of the same config
  Mesh mesh;
  AttnOptions attention;
  std::optional<int64_t> batch;
  std::optional<int64_t> seq;      ///< tokens per sequence; in decode the cache length
  DType dtype = DType::kBFloat16;  ///< activation dtype; the cache uses the config's kvdtype
  /// The attention kernel (easyplan's or EasyDeL's name); "" = what the config's attn_mechanism (and,
  /// in decode, decode_attn_mechanism) selects.
  std::string kernel;
  std::optional<RaggedCacheOptions> ragged;  ///< report a RaggedPagesCache instead of a TransformerCache
};

struct ActivationPlan {
  AttnOptions attention_options;
  Mesh mesh;
  AttnShardingRules attention;
  /// Residual stream presets, resolved by their integer mode for this mode's query length.
  std::vector<std::pair<std::string, PartitionSpec>> residual;
  std::optional<PartitionSpec> logits, labels;  ///< train only (the loss constraint)
  /// The cache as stored: [BATCH, KV_LENGTH, KV_HEAD, KV_HEAD_DIM] resolved with prefill rules, and
  /// sanitised when the shape is known.
  PartitionSpec cache_key, cache_value, cache_index;
  /// How a decode step constrains the cache it reads (the bthd key spec in decode rules; with shapes,
  /// as eformer's correction applies it to the cache's shape).
  PartitionSpec cache_decode_key;
  bool cache_reshard = false;  ///< decode steps reshard the cache (layouts differ on this mesh)
  bool use_sharded_kv_caching = false;
  Json kv_cache_sharding_sequence_axis_name;
  ExpertMesh expert_mesh;
  std::optional<ExpertSpecs> experts;
  std::optional<KernelReport> kernel;  ///< the attention kernel, when easyplan models it
  std::string kernel_note;             ///< why `kernel` is absent (auto, a kernel not modelled)
  std::optional<RaggedCacheReport> ragged;
  std::vector<ActivationTensor> tensors;  ///< with batch and seq: one layer's tensors, then the cache
  int64_t cache_bytes = 0;                ///< the whole KV cache (all layers), global
  int64_t cache_bytes_per_device = 0;
  bool has_shapes = false;
  std::vector<Finding> findings;
};

/// Builds the activation plan, in steps: the mode's specs resolved raw, the attention kernel's report,
/// the cache specs, the expert mesh and specs; with --batch/--seq the step's tensors and the
/// TransformerCache laid on the mesh; the RaggedPagesCache when asked for; the cache-reshard finding.
/// Errors: a token that cannot be resolved, a config without the counts that --batch/--seq need, sizes
/// that overflow. REQUIRES: table, presets, config and dims are set.
StatusOr<ActivationPlan> BuildActivationPlan(const ActivationRequest& request);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_ACTIVATIONS_H_
