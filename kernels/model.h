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
#include "schemas/forward_structure.h"
#include "schemas/model_dims.h"

namespace easyplan::kernels {

/// The tiny model's dims are the resolved config's (schemas::ModelDims, whole: a dim added there reaches
/// the forward without a copy to keep up), over which ModelDescOf (kernels/tiny_model.h) zeroes what the
/// structure does not run and adds what the tree and the plan say.
struct ModelDesc : schemas::ModelDims {
  /// A routed expert's weights renormalized over the top-k unless the structure or config says not.
  ModelDesc() { norm_topk_prob = true; }
  /// The family's forward structure (schemas/forwards.yaml): its mechanisms and parameter names.
  schemas::ForwardStructure forward;
  /// Where a text tower inside a multimodal model keeps the parameters the forward structure names:
  /// every name under "language_model/" (Llama 4; gemma3 and mistral3 under c14e25c9), or, under EasyDeL
  /// 090a03b2's nesting of gemma3 and mistral3, "model/..." as "model/language_model/..." (the head stays
  /// "lm_head/kernel"). Both empty: the names as the structure gives them.
  std::string param_prefix;
  std::string param_rename_from, param_rename_to;
  /// The tree's name of the structure's parameter `name`.
  std::string Param(const std::string& name) const {
    if (!param_rename_from.empty() && name.starts_with(param_rename_from)) {
      return param_rename_to + name.substr(param_rename_from.size());
    }
    return param_prefix + name;
  }
  // What the tree holds of the structure's optional parameters (ModelDescOf reads layer 0).
  bool attention_bias = false;  ///< q/k/v (or the fused qkv) biases
  bool o_bias = false;          ///< the output projection's bias
  bool mlp_bias = false;        ///< the dense MLP's biases
  bool qk_norm = false;         ///< q/k norm weights
  bool score_bias = false;      ///< the router's score bias (DeepSeek's e_score_correction_bias)
  bool router_bias = false;     ///< the router's bias (gpt-oss)
  bool head_bias = false;       ///< the LM head's bias (PhiMoE's lm_head_bias)
  /// The routed experts' weight leaf under each expert name: "kernel", or "" when the name is the parameter
  /// itself (DBRX's ArrayParams experts/mlp/w1, v1, w2).
  std::string expert_kernel_leaf = "kernel";
  std::string norm_weight = "kernel";  ///< a norm's weight leaf: kernel (RMSNorm) or scale (EasyDeL's LayerNorm)
  bool norm_bias = false;              ///< the norms have biases
  /// The norm slots resolved against the tree: the name under the layer, "" = none.
  std::string attention_norm, attention_output_norm, mlp_norm, mlp_output_norm;
  // Rotary embeddings and attention masks
  int64_t rotary_dim = 0;         ///< RoPE on the first rotary_dim of each head (GLM's partial_rotary_factor); 0 = all
  std::vector<bool> nope_layers;  ///< per layer, true: no rotary embedding (no_rope_layers); empty = none
  bool l2_qk_norm = false;        ///< the structure's weight-free q/k norm, when the config's use_qk_norm holds
  // Per layer (layer_types): "sliding_attention" masks keys sliding_window or more tokens back (0 when the
  // config's use_sliding_window is off), "chunked_attention" keys outside the query's chunk of
  // attention_chunk_size tokens; empty = every layer causal. The activations' sharding constraints are
  // the dims' `axes` (EasyDeL's PartitionAxis, and its expert mesh for the fused MoE path).
  std::vector<bool> sparse_layers;  ///< per layer, whether its MLP is the MoE block (the structure's sparse_layers)
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

/// EasyDeL's fused MoE path splits the routed experts over the folded expert axis (ModelDesc::expert_axes)
/// inside shard_map, which needs the expert count divisible by it: BadInput naming the fold otherwise.
Status CheckFusedMoe(const ModelDesc& model, const Mesh& mesh);

/// Whether the structure's MoE block can run on `mesh`: its mechanisms combine (a router that scales the
/// experts' inputs needs experts that take them; per-expert modules name '{e}' and run in a loop; the
/// expert loop runs gated experts) and, on the fused path, CheckFusedMoe. BadInput naming the structure.
Status CheckMoeBlock(const ModelDesc& model, const Mesh& mesh);

/// The mesh axes an entry of names selects (Mesh::AxisIndex; names the mesh lacks are skipped), and
/// their product of sizes.
std::vector<int> EntryAxes(const Mesh& mesh, const PartitionSpec::Entry& names);
int64_t EntryTiles(const Mesh& mesh, const PartitionSpec::Entry& names);

/// The spec of an activation from PartitionAxis entries, dropping axes the mesh lacks or that repeat.
DistSpec ActivationSpec(const Mesh& mesh, const std::vector<PartitionSpec::Entry>& entries);

}  // namespace easyplan::kernels

#endif  // EASYPLAN_KERNELS_MODEL_H_
