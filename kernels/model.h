#ifndef EASYPLAN_KERNELS_MODEL_H_
#define EASYPLAN_KERNELS_MODEL_H_

// What the reference forward pass needs to know about a model: the family's structure and its dims.
// kernels/tiny_model.h fills it from the tiny model's schemas::ModelDims; kernels never reads configs. Parameter names
// are EasyDeL's (kernels [in, out], experts stacked [E, in, out]), as the tree templates give them.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/partition_spec.h"
#include "kernels/spmd.h"

namespace easyplan::kernels {

enum class ModelFamily {
  kLlama,     ///< llama, mistral, qwen2, qwen3 (q/k norms): GQA attention + SwiGLU MLP
  kMoe,       ///< mixtral (block_sparse_moe, w1/w3/w2) and qwen3_moe / qwen2_moe (mlp/experts)
  kDeepseek,  ///< deepseek_v3: MLA, dense-first layers, sigmoid group-limited routing, shared experts
  kGpt2,      ///< fused c_attn, LayerNorm with bias, learned positions, Conv1D [in, out] kernels
};

struct ModelDesc {
  ModelFamily family = ModelFamily::kLlama;
  std::string model_type;
  int64_t vocab = 0, hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0;
  double norm_eps = 1e-6;
  double rope_theta = 10000.0;
  bool tied_embeddings = false;
  bool attention_bias = false;  ///< q/k/v biases
  bool o_bias = false;          ///< o_proj bias
  bool mlp_bias = false;        ///< gate/up/down biases
  bool qk_norm = false;         ///< qwen3 per-head RMSNorms
  // MoE
  bool mixtral_names = false;  ///< block_sparse_moe/experts/w1,w3,w2 instead of mlp/experts/gate_proj,...
  int64_t experts = 0, top_k = 0, moe_intermediate = 0;
  bool norm_topk_prob = true;
  int64_t shared_intermediate = 0;  ///< width of the shared experts' MLP, 0 = none
  int64_t first_dense_layers = 0;
  // DeepSeek routing
  int64_t n_group = 1, topk_group = 1;
  double routed_scaling = 1.0;
  bool correction_bias = false;
  // MLA
  int64_t q_lora_rank = 0, kv_lora_rank = 0, qk_nope = 0, qk_rope = 0, v_head = 0;
  // Activations: the PartitionAxis batch / sequence / hidden-state / head axes (EasyDeL's sharding
  // constraints on hidden states [B, S, H] and on q/k/v [B, S, heads, D]).
  PartitionSpec::Entry batch_axes, sequence_axes, hidden_axes, head_axes;
  int64_t batch = 2, seq = 8;
  int64_t bytes_per_element = 2;  ///< what a collective moves per element (the activation dtype)
  // The KV cache a prefill of `seq` tokens fills (serving): when set, every attention layer also stores
  // its keys [B, T, kv heads, key dim] and values [B, T, kv heads, value dim] laid out by these entries
  // (EasyDeL's stored cache spec, after its sanitiser), and the cache's per-sequence `indexs` and
  // `starts` ([B], int32) by cache_index_axes.
  std::optional<std::vector<PartitionSpec::Entry>> cache_axes;
  std::vector<PartitionSpec::Entry> cache_index_axes;
  int64_t cache_bytes_per_element = 2;  ///< kvdtype
};

/// Named tensors the forward produces, in execution order: "embed", "layer 0", ..., "logits", then
/// (with a cache) "cache 0 k", "cache 0 v", ... and the cache's index vectors.
struct Activation {
  enum class Kind { kResidual, kLogits, kCache };
  std::string name;
  DistTensor value;
  Kind kind = Kind::kResidual;
  int64_t bytes_per_element = 0;  ///< 0: the model's activation dtype
  bool compared = true;           ///< false for the cache's index vectors (bookkeeping, not values)
};

/// Looks up a placed parameter by EasyDeL name (dies on a missing name: the tree comes from the
/// family's template, so a miss is a bug).
using ParamLookup = std::function<const DistTensor&(const std::string& name)>;

/// Runs the forward pass over `ids` [batch, seq] and returns the compared activations.
std::vector<Activation> Forward(const ModelDesc& model, Spmd& spmd, const ParamLookup& param, const DistTensor& ids);

/// The spec of an activation from PartitionAxis entries, dropping axes the mesh lacks or that repeat.
DistSpec ActivationSpec(const Mesh& mesh, const std::vector<PartitionSpec::Entry>& entries);

}  // namespace easyplan::kernels

#endif  // EASYPLAN_KERNELS_MODEL_H_
