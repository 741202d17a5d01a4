#ifndef EASYPLAN_PLANNER_ACTIVATIONS_H_
#define EASYPLAN_PLANNER_ACTIVATIONS_H_

// The other half of a sharding plan: the specs EasyDeL gives what flows between the parameters in
// one runtime mode (EasyDeL easydel/operations/_operation_meta.py and its callers). Three layers, kept apart as EasyDeL
// keeps them:
//
//  1. resolution, raw: OperationMetadata.get_shardings(mode, layout, qkv_mni_sharding, softmax_aux)
//     resolves every AttnShardingRules field through partition_axis with no shape and no mesh, so
//     size-1 and unknown axes stay (GetShardings, planner/runtime_modes.h);
//  2. application: eformer's shape correction of each spec against a tensor (planner/layout.h
//     CorrectSpec, --uneven replicate; planner/activation_tensors.h), and the KV cache's own sanitiser
//     (both K and V must divide; planner/kv_cache.h);
//  3. geometry: with --batch/--seq, the global and per-device shapes and bytes, and findings where a
//     dim is not divisible by its axes (planner/activation_tensors.h).
//
// Each concept has its own file: the runtime modes (runtime_modes.h), the attention kernels
// (attention_kernels.h), the MoE expert specs (expert_specs.h), the TransformerCache (kv_cache.h) and
// eSurge's paged cache (ragged_cache.h). This file puts them together, in the steps of
// BuildActivationPlan.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/json.h"
#include "core/mesh.h"
#include "core/partition_spec.h"
#include "core/status.h"
#include "planner/activation_table.h"
#include "planner/activation_tensors.h"
#include "planner/attention_kernels.h"
#include "planner/expert_mesh.h"
#include "planner/expert_specs.h"
#include "planner/findings.h"
#include "planner/kv_cache.h"
#include "planner/ragged_cache.h"
#include "planner/runtime_modes.h"
#include "rules/presets.h"
#include "schemas/model_dims.h"

namespace easyplan::planner {

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
