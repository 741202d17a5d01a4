#ifndef EASYPLAN_PLANNER_KV_CACHE_H_
#define EASYPLAN_PLANNER_KV_CACHE_H_

// EasyDeL's TransformerCache (easydel/caching/transformer/cache.py): what one layer stores (its
// geometry), the specs it is stored with (resolved with the train rules even in decode) and its
// sanitiser (_sanitize_sharding_axes_for_shape: both K and V must divide), the rows it adds to an
// activation plan, and whether a decode step reshards it. eSurge's paged cache is planner/ragged_cache.h.

#include <cstdint>
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
#include "planner/activation_tensors.h"
#include "planner/findings.h"
#include "rules/presets.h"
#include "schemas/model_dims.h"

namespace easyplan::planner {

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

/// _sanitize_sharding_axes_for_shape of the TransformerCache for every shape in `shapes` at once: an
/// entry is kept only when its mesh sizes' product divides the dim in every shape. An axis name the
/// mesh lacks makes EasyDeL raise KeyError: it is returned in `unknown_axis`.
PartitionSpec SanitizeCacheSpec(const PartitionSpec& spec, const std::vector<Shape>& shapes, const Mesh& mesh,
                                std::string* unknown_axis);

/// Two specs that lay a tensor out identically on `mesh` (size-1 axes dropped, trailing Nones trimmed):
/// what XLA compares, so P(('fsdp', 'dp')) and P('dp') are the same layout when fsdp = 1.
bool SameLayout(const PartitionSpec& a, const PartitionSpec& b, const Mesh& mesh);

/// The cache's storage dtype: the config's kvdtype, else the activation dtype.
DType KvDType(const Json& config, DType activation);

/// The TransformerCache's specs, raw: key, value and indexs as stored ([BATCH, KV_LENGTH, KV_HEAD,
/// KV_HEAD_DIM], resolved with the train rules), and the key as a decode step constrains it (the bthd
/// key field of get_shardings in decode rules, no mni).
struct CacheSpecs {
  PartitionSpec key, value, index, decode_key;
};
StatusOr<CacheSpecs> ResolveCacheSpecs(const ActivationTable& table, const rules::Presets& presets, const Json& config);

/// The TransformerCache of `batch` sequences of `seq` tokens laid on the builder's mesh.
struct LaidCache {
  /// One row group per distinct layer length (full layers, then each sliding or chunked window): key,
  /// value, indexs and starts, each with its layer count; then Qwen3-Next's linear-attention state.
  std::vector<ActivationTensor> rows;
  int64_t bytes = 0, bytes_per_device = 0;  ///< the whole cache, all layers
  /// The specs as the first row group stores them (sanitised for its shapes; the decode key corrected).
  CacheSpecs specs;
  /// What the reshard check compares: the key as stored and as a decode step constrains it.
  PartitionSpec stored, decode;
};
/// Lays the cache out, sanitising `specs` for each group's shapes and reporting each entry the
/// sanitiser drops (and an axis the mesh lacks) into `builder`. Errors: sizes that overflow int64.
StatusOr<LaidCache> LayTransformerCache(const CacheSpecs& specs, const CacheGeometry& geometry, int64_t batch,
                                        int64_t seq, DType kvdtype, ActivationBuilder& builder);

/// The cache-reshard warning: the cache is stored as `stored` but a decode step constrains it to
/// `decode`, so XLA reshards the whole cache at every step.
Finding CacheReshardFinding(const PartitionSpec& stored, const PartitionSpec& decode);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_KV_CACHE_H_
