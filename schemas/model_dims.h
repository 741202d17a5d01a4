#ifndef EASYPLAN_SCHEMAS_MODEL_DIMS_H_
#define EASYPLAN_SCHEMAS_MODEL_DIMS_H_

// The model's geometry as typed values, read once from a resolved config: what the memory model, the
// activation plan and `check` need to know about the model (sizes, head counts, experts, MLA ranks,
// attention windows), so none of them looks keys up in the config again.
//
// Each member is a canonical dim (schemas/dim_keys.h) read from the config keys data names: the shared
// spellings of schemas/dims.yaml (transformers' attribute names; where transformers has several names for
// a dim, such as the expert count's n_routed_experts, num_local_experts and num_experts, the first
// present counts), or the family's own `dims:` (docs/SCHEMAS.md, "Dim keys"). A family that stores a
// dim under a name of its own may instead declare the transformers one in its `attribute_map`
// (schemas/families/gpt2.yaml: hidden_size -> n_embd), which the resolver writes next to the stored name.
// The member comments below name the shared spellings.
//
// Multimodal configs keep the language model's geometry in a sub-config (Gemma3Config.text_config):
// GeometryConfig picks it as transformers' PretrainedConfig.get_text_config() does for those families.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/status.h"
#include "schemas/dim_keys.h"
#include "schemas/resolver.h"

namespace easyplan::schemas {

/// PartitionAxis entries (a mesh axis name, a list of names, or null = []) of the resolved
/// partition_axis: the sharding constraints `check`'s reference forward pass puts on activations.
struct ActivationAxes {
  std::vector<std::string> batch;         ///< partition_axis.batch_axis
  std::vector<std::string> sequence;      ///< partition_axis.sequence_axis
  std::vector<std::string> hidden_state;  ///< partition_axis.hidden_state_axis
  std::vector<std::string> head;          ///< partition_axis.head_axis
  /// EasyDeL's expert mesh (easydel/infra/base_config.py _mesh_shape_ep): the model-mesh axes folded into
  /// its dp, ep and tp axes. fsdp and sp join ep when fsdp_is_ep_bound / sp_is_ep_bound (the defaults),
  /// else dp; ep is fsdp-major, as the row-major reshape of the device list orders them.
  std::vector<std::string> expert_data, expert, expert_tensor;
  /// use_expert_tensor_mode: the experts' kernels are laid out on tp instead of over ep.
  bool expert_tensor_mode = false;
};

/// Sizes are 0 when the config does not give them as a positive integer (a dense model has 0 experts).
struct ModelDims {
  std::string model_type;  ///< of the geometry config ("gemma3_text" inside a gemma3 config)
  std::string pointer;     ///< JSON pointer of the geometry config: "" or "/text_config"

  // ---- the transformer ----
  int64_t hidden = 0;         ///< hidden_size (GPT-2: n_embd)
  int64_t layers = 0;         ///< num_hidden_layers
  int64_t heads = 0;          ///< num_attention_heads
  int64_t kv_heads = 0;       ///< num_kv_heads, else num_key_value_heads, else heads
  int64_t head_dim = 0;       ///< head_dim, else hidden / heads (0 when either is missing)
  int64_t intermediate = 0;   ///< intermediate_size: the dense MLP width
  int64_t vocab = 0;          ///< vocab_size
  int64_t max_positions = 0;  ///< max_position_embeddings (GPT-2: n_positions)
  /// The family's `context:` (docs/SCHEMAS.md): the config key that bounds a sequence ("" when the family
  /// declares none), its value (0 when absent or null), and whether positions are a learned embedding
  /// table (no row past the bound: a longer sequence cannot run) rather than rotary (runs, degraded).
  std::string context_key;
  int64_t context_limit = 0;
  bool learned_positions = false;
  bool gated_mlp = true;         ///< SwiGLU / GeGLU (the config names `hidden_act`) vs GPT-2's fc / proj
  bool tied_embeddings = false;  ///< tie_word_embeddings
  double norm_eps = 1e-6;        ///< rms_norm_eps, else layer_norm_epsilon, else layer_norm_eps
  double rope_theta = 10000.0;   ///< rope_theta
  std::string torch_dtype;       ///< "" when null or absent

  // ---- attention windows ----
  int64_t sliding_window = 0;      ///< 0 = none
  bool use_sliding_window = true;  ///< Qwen2's switch; false disables sliding_window
  /// per layer: "full_attention", "sliding_attention", "chunked_attention" (Llama 4: attention within
  /// chunks of attention_chunk_size tokens) or "linear_attention" (Qwen3-Next's Gated DeltaNet: no KV
  /// cache, a fixed-size state); empty when absent
  std::vector<std::string> layer_types;
  int64_t attention_chunk_size = 0;  ///< 0 = none
  /// Per-head attention sinks (gpt-oss's `sinks` [heads]: one learned logit per head in the softmax),
  /// EasyDeL's softmax_aux; from the family's geometry `attention_sinks`.
  bool attention_sinks = false;

  // ---- attention variants (what `check`'s reference forward pass needs beyond the sizes) ----
  double partial_rotary_factor = 1.0;  ///< partial_rotary_factor: RoPE on that fraction of head_dim (GLM)
  bool use_qk_norm = false;            ///< use_qk_norm (Llama 4: a weight-free L2 norm of q and k)
  /// no_rope_layers (Llama 4): per layer, 1 = the layer uses RoPE, 0 = NoPE; empty when absent
  std::vector<int64_t> no_rope_layers;
  double swiglu_limit = 7.0;  ///< swiglu_limit (gpt_oss: the experts' gate / up clamp)

  // ---- linear attention (Qwen3-Next's Gated DeltaNet, transformers modeling_qwen3_next.py) ----
  int64_t linear_key_heads = 0, linear_value_heads = 0;  ///< linear_num_key_heads, linear_num_value_heads
  int64_t linear_key_dim = 0, linear_value_dim = 0;      ///< linear_key_head_dim, linear_value_head_dim
  int64_t linear_conv_kernel = 0;                        ///< linear_conv_kernel_dim

  // ---- mixture of experts ----
  int64_t experts = 0;              ///< routed experts: n_routed_experts, num_local_experts or num_experts
  int64_t top_k = 0;                ///< num_experts_per_tok
  int64_t moe_intermediate = 0;     ///< moe_intermediate_size, else intermediate
  int64_t shared_intermediate = 0;  ///< n_shared_experts x moe_intermediate, else shared_expert_intermediate_size
  int64_t first_dense_layers = 0;   ///< first_k_dense_replace
  /// Layers whose MLP is the routed experts: mlp_layer_types' "sparse" entries when it has one per
  /// layer, else layers - first_dense_layers; 0 for a dense model.
  int64_t moe_layers = 0;
  /// Per layer, whether its MLP is the routed experts (the rule moe_layers counts); empty for a dense model.
  std::vector<bool> moe_layer_mask;
  bool norm_topk_prob = false;          ///< the config's flag (false when absent)
  int64_t n_group = 1, topk_group = 1;  ///< DeepSeek's group-limited routing (1 when absent)
  double routed_scaling = 1.0;          ///< routed_scaling_factor
  /// router_jitter_noise: PhiMoE's sparsemixer masks the logits more than 2 x this below the chosen one's
  double router_jitter_noise = 0.0;

  // ---- multi-head latent attention (DeepSeek) ----
  int64_t q_lora_rank = 0;  ///< 0 when null: queries are projected directly
  int64_t kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
  /// MLA: every head has its own keys and values, qk_nope + qk_rope wide, and values v_head_dim wide.
  bool mla() const { return heads > 0 && qk_nope_head_dim > 0 && qk_rope_head_dim > 0 && v_head_dim > 0; }

  ActivationAxes axes;
};

/// The object of `config` that holds the model's geometry: `config` itself, or its text_config when
/// `config` has no num_attention_heads and text_config has one (multimodal families such as gemma3).
const Json& GeometryConfig(const Json& config);

/// The dims of a resolved config (its text_config for multimodal families). Errors: a geometry key
/// whose value has the wrong type (a size given as a string, layer_types not a list), naming its JSON
/// pointer, what was expected and what was found. A missing key is not an error: the dim is 0 (or its
/// default), and the consumer that needs it says so.
/// `family_geometry` is ResolvedConfig::geometry: the family's own statement of a dim, which wins over
/// the config key of the same name (docs/SCHEMAS.md, "Geometry"). `family_keys` is
/// ResolvedConfig::dim_keys: which keys each dim is read from; for an object it lacks, the shared keys of
/// the built-in schemas/dims.yaml.
StatusOr<ModelDims> ModelDimsOf(const Json& config, const Json& family_geometry = Json::object(),
                                const DimKeysByObject& family_keys = {});
StatusOr<ModelDims> ModelDimsOf(const ResolvedConfig& resolved);

}  // namespace easyplan::schemas

#endif  // EASYPLAN_SCHEMAS_MODEL_DIMS_H_
