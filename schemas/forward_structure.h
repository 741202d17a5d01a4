#ifndef EASYPLAN_SCHEMAS_FORWARD_STRUCTURE_H_
#define EASYPLAN_SCHEMAS_FORWARD_STRUCTURE_H_

// The structure of a family's reference forward pass, as data (docs/SCHEMAS.md, "Forward structures"):
// which mechanisms a decoder layer is built from (norm kind and placement, attention variant, MLP kind,
// router, experts, shared expert) and the EasyDeL names of the parameters each one reads. The named
// structures live in schemas/forwards.yaml; a family's `numeric_check.forward` names one, or extends one
// with overrides and config-conditional variants. kernels/ builds the forward pass from this alone, so a
// new family needs a YAML entry and no C++.

#include <optional>
#include <string>
#include <vector>

#include "core/document.h"
#include "core/json.h"
#include "core/status.h"

namespace easyplan::schemas {

enum class NormKind { kRms, kLayer };
enum class BlockKind {
  kSequential,  ///< h += attn(norm(h)); h += mlp(norm(h))
  kParallel,    ///< h += attn(norm(h)) + mlp(norm'(h)), norm' = norm when the block has no MLP norm
};
enum class AttentionKind {
  kGroupedQuery,  ///< q/k/v projections (or one fused projection), GQA over kv heads
  kLatent,        ///< DeepSeek's multi-head latent attention (MLA)
};
/// How one fused q|k|v projection's output is laid out per token.
enum class FusedQkvLayout {
  kNone,    ///< separate q, k, v projections
  kBlocks,  ///< [q heads | k heads | v heads] (Phi-3 qkv_proj, DBRX Wqkv)
  /// [kv heads, heads / kv heads + 2, head_dim]: a group's queries, key and value (Falcon, InternLM2; with as
  /// many kv heads as heads, GPT-NeoX's per-head [q, k, v] triples)
  kKvGroups,
  kThirds,  ///< [3, hidden]: all queries, keys, values (GPT-2 c_attn)
};
enum class RopeKind { kHalves, kInterleaved, kNone };
enum class QkNormKind {
  kPerHead,    ///< over head_dim of each head (Qwen3, Gemma 3)
  kFullWidth,  ///< over the whole projection before the head split (OLMo 2)
};
enum class ActivationKind { kSilu, kGelu, kGeluTanh };
enum class MlpKind {
  kGated,  ///< down(act(gate(x)) * up(x)); gate and up separate or one fused gate_up (halves)
  kPlain,  ///< down(act(up(x)))
};
enum class RouterKind {
  kSoftmaxTopK,          ///< softmax over every expert, keep the top k (Mixtral, Qwen-MoE)
  kSigmoidGroupLimited,  ///< sigmoid scores, optional score bias, group-limited top k (DeepSeek-V3)
  kTopKSoftmax,          ///< biased logits, top k, softmax over the k chosen (gpt-oss)
  kTopKSigmoidInput,     ///< top k of the logits, sigmoid of each, scaling the experts' inputs (Llama 4)
  /// softmax over every expert, group-limited top k: groups ranked by their best score, the others' scores
  /// zeroed (DeepSeek-V2's topk_method group_limited_greedy)
  kSoftmaxGroupLimited,
  /// PhiMoE's sparsemixer: two experts, each weighted by a softmax over the logits within a jitter threshold
  /// of its own (the second's with the first masked out)
  kSparseMixer,
};
enum class ExpertsKind {
  kGatedSilu,              ///< separate gate / up / down kernels, SwiGLU
  kFusedHalvesSilu,        ///< one gate_up kernel, halves, SwiGLU (Llama 4)
  kInterleavedClampedGlu,  ///< one gate_up kernel, interleaved, clamped GLU with biases (gpt-oss)
  kSplitClampedGlu,        ///< separate gate / up / down modules with biases, clamped GLU (gpt-oss at 090a03b2)
};
/// How the routed experts' kernels are stored, each expert's kernel being [in, out].
enum class ExpertsLayout {
  kStacked,      ///< one parameter [E, in, out] (EasyDeL's MoE linears)
  kExpertsLast,  ///< one parameter [in, out, E] (GraniteMoE's fused experts as EasyDeL's converter permutes them)
  /// one 2-D parameter [E x F, H], F the expert width: expert e is rows e*F .. (e+1)*F whichever way its
  /// projection goes, so an input projection is [out, in] per expert and the output one [in, out] (DBRX)
  kPackedRows,
  kPerExpert,  ///< one module per expert: the names hold "{e}", replaced by the expert's index (PhiMoE)
};
/// How the block runs its routed experts.
enum class ExpertsExecution {
  kFusedMoe,  ///< EasyDeL's fused MoE path (kernels/model_fused_moe.cc): shard_map over the expert mesh
  /// the module's own loop over experts: every expert's MLP on every token, in the plan's layout, scaled by
  /// its routing weight (zero when not chosen) and summed (EasyDeL's DbrxExperts, PhiMoeSparseMoeBlock)
  kExpertLoop,
  /// each token gathers its k chosen experts' kernels and biases (jnp.take, [T, k, in, out]) and multiplies
  /// them itself; the k outputs are summed by their routing weights (GptOssExperts at EasyDeL c14e25c9)
  kPerTokenGather,
  /// a loop over the E experts, each pass running the stacked experts on every token scaled by expert e's
  /// score, the tokens split into E consecutive chunks, chunk j through expert j (Llama4TextMoe at c14e25c9)
  kScoreMaskedLoop,
};
enum class SparseLayers {
  kAll,         ///< every layer's MLP is the MoE block
  kAfterDense,  ///< the first first_k_dense_replace layers are dense (DeepSeek)
  kByTree,      ///< a layer is sparse when the tree has its router (Llama 4, Qwen3-Next)
};
enum class SharedExpertKind { kNone, kPlain, kSigmoidGated };

struct ForwardStructure {
  std::string name;  ///< the schemas/forwards.yaml entry it starts from (for messages)
  // The model, in EasyDeL names relative to the text model's root.
  std::string embedding;         ///< the token embedding table [vocab, hidden]
  std::string positions;         ///< a learned position table [positions, hidden] (GPT-2), "" = none
  bool scale_embedding = false;  ///< multiply the embedding by sqrt(hidden) (Gemma)
  std::string layers;            ///< layer i's parameters are under "<layers>/<i>/"
  std::string final_norm;        ///< the norm before the head
  std::string head;              ///< the LM head kernel [hidden, vocab]
  bool tied_by_tree = false;     ///< tied exactly when the tree lacks the head (else the config's tie_word_embeddings)
  bool kernels_out_in = false;   ///< every projection kernel is [out, in] (GPT-2's Conv1D), else [in, out]
  // Norms. Each slot lists candidate names under the layer; the first the tree holds is used, none = no norm.
  NormKind norm = NormKind::kRms;
  bool zero_centered_norms = false;  ///< RMSNorms scale by 1 + weight (Gemma, Qwen3-Next)
  BlockKind block = BlockKind::kSequential;
  std::vector<std::string> attention_norm, attention_output_norm, mlp_norm, mlp_output_norm;
  struct Attention {
    AttentionKind kind = AttentionKind::kGroupedQuery;
    std::string q, k, v, o;  ///< projections (kernels; "<name>/bias" used when the tree holds it)
    std::string qkv;         ///< one fused projection instead of q, k, v
    FusedQkvLayout layout = FusedQkvLayout::kNone;
    std::string q_norm, k_norm;  ///< used when the tree holds them
    QkNormKind qk_norm = QkNormKind::kPerHead;
    RopeKind rope = RopeKind::kHalves;
    bool l2_qk_norm = false;   ///< weight-free RMS norm of q and k after RoPE, on RoPE layers (Llama 4)
    std::string sinks;         ///< one learned logit per head joins the softmax (gpt-oss), "" = none
    bool output_gate = false;  ///< q's projection also emits a per-head sigmoid gate on the output (Qwen3-Next)
    /// Layers whose layer_types entry is linear_attention run a Gated DeltaNet under this name (Qwen3-Next).
    std::string linear;
  } attention;
  struct Mlp {
    MlpKind kind = MlpKind::kGated;
    std::string gate, up, down, gate_up;
    ActivationKind activation = ActivationKind::kSilu;
  } mlp;
  struct Moe {
    std::string block;  ///< the MoE block under the layer, "" = a dense model
    std::string router;
    RouterKind router_kind = RouterKind::kSoftmaxTopK;
    std::string score_bias;  ///< added to the scores when choosing (DeepSeek's e_score_correction_bias)
    ExpertsKind experts = ExpertsKind::kGatedSilu;
    /// Expert kernels under the block, laid out as `layout` says: a module whose `kernel` is used, or the
    /// parameter itself when the tree has no `<name>/kernel` (DBRX's experts/mlp/w1).
    std::string gate, up, down, gate_up;
    ExpertsLayout layout = ExpertsLayout::kStacked;
    ExpertsExecution execution = ExpertsExecution::kFusedMoe;
    /// The block reshapes its tokens [B, S, H] to [B x S, H] before the router and the experts
    /// (PhiMoeSparseMoeBlock), which gathers a sharded sequence dim.
    bool flatten_tokens = false;
    std::string shared;  ///< the shared expert's gated MLP, "" = none
    SharedExpertKind shared_kind = SharedExpertKind::kNone;
    std::string shared_gate;  ///< its sigmoid gate [hidden, 1] (kSigmoidGated)
    SparseLayers sparse_layers = SparseLayers::kAll;
    /// The model code's fixed choice whatever the config says (Mixtral always renormalises); nullopt: the config's.
    std::optional<bool> norm_topk_prob;
  } moe;
};

/// Applies the keys of `block` (a mapping of schemas/forwards.yaml's form, at `pointer` in `doc`) over
/// `structure`: a key given replaces the value before it, a key left out keeps it. Unknown keys and kinds
/// are bad input naming the file, line and the closest known name. `extends` is not read here.
Status ApplyForwardStructure(const Document& doc, const Json& block, const std::string& pointer,
                             ForwardStructure* structure);

/// The names of the structures schemas/forwards.yaml (`doc`) declares.
std::vector<std::string> ForwardStructureNames(const Document& doc);

/// The structure `name` of schemas/forwards.yaml, its `extends` chain applied base first. Bad input
/// (at `loc`, with a did-you-mean) when there is no such structure.
StatusOr<ForwardStructure> NamedForwardStructure(const Document& doc, const std::string& name, const SourceLoc& loc);

}  // namespace easyplan::schemas

#endif  // EASYPLAN_SCHEMAS_FORWARD_STRUCTURE_H_
