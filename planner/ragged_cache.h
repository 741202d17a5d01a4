#ifndef EASYPLAN_PLANNER_RAGGED_CACHE_H_
#define EASYPLAN_PLANNER_RAGGED_CACHE_H_

// eSurge's RaggedPagesCache (easydel/caching/ragged_page/cache.py), which `--cache ragged` reports in
// place of the TransformerCache (planner/kv_cache.h): one layer's kv_pages tensor, K and V packed
// together, its v2 or v3 geometry and shard count, and the ragged kernel's token-major specs.

#include <cstdint>

#include "core/dtype.h"
#include "core/json.h"
#include "core/partition_spec.h"
#include "core/status.h"
#include "planner/activation_table.h"
#include "planner/activation_tensors.h"
#include "planner/kv_cache.h"
#include "rules/presets.h"

namespace easyplan::planner {

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

/// The cache of `options` for a model of `geometry` whose config asks for `kvdtype`, its kv_pages laid on
/// the builder's mesh (findings into `builder`). Errors (BadInput): an unknown version, a page size or
/// page count below 1 or not a multiple of the data-parallel size, an MLA model, a kvdtype v3 cannot
/// pack; sizes that overflow int64.
StatusOr<RaggedCacheReport> BuildRaggedCache(const ActivationTable& table, const rules::Presets& presets,
                                             const Json& config, const RaggedCacheOptions& options,
                                             const CacheGeometry& geometry, DType kvdtype, ActivationBuilder& builder);

}  // namespace easyplan::planner

#endif  // EASYPLAN_PLANNER_RAGGED_CACHE_H_
