#ifndef EASYPLAN_KERNELS_FORWARD_PASS_H_
#define EASYPLAN_KERNELS_FORWARD_PASS_H_

// The reference forward pass (kernels/model.h) as a class, internal to kernels, built from the family's
// forward structure (ModelDesc::forward, schemas/forwards.yaml). The decoder layer and the common
// mechanisms (norms, grouped-query attention, MLPs, softmax and group-limited routing) are defined in
// kernels/forward_pass.cc; mechanisms of one kind each are members defined in their own files (attention
// sinks and the clamped-GLU experts in model_gpt_oss.cc, the input-scaling sigmoid router in model_llama4.cc,
// the sparsemixer router in model_phimoe.cc, the Gated DeltaNet in model_qwen3_next.cc, the experts' MLPs in
// each layout and the expert loop in model_experts.cc, the fused MoE path in model_fused_moe.cc).

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/model.h"

namespace easyplan::kernels::internal {

constexpr double kMasked = -1e30;

// The indices of v[0..n) from the largest value down, ties in index order (torch.topk's choice for the
// routers of every family).
inline void TopKOrder(const double* v, std::vector<int64_t>& order) {
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [v](int64_t a, int64_t b) { return v[a] > v[b]; });
}

// Every router's top-k step, said once: each token's row v[0..e) of `scores` [B, S, E] (the experts whole on
// each device) is ranked (TopKOrder) and rewritten in place by `rewrite(v, order)`, which reads the row and
// its ranking; `before(v, e)`, when given, edits the row before it is ranked (group limiting).
template <typename Rewrite>
DistTensor RankRows(Spmd& s, DistTensor scores, Rewrite rewrite, const std::string& what,
                    std::function<void(double*, int64_t)> before = nullptr) {
  return s.Local(
      std::move(scores), {2},
      [rewrite, before](HostTensor& t, const std::vector<Range>&) {
        const int64_t e = t.shape[2];
        std::vector<int64_t> order(static_cast<size_t>(e));
        for (int64_t r = 0; r < t.size() / e; ++r) {
          double* v = t.data.data() + r * e;
          if (before) before(v, e);
          TopKOrder(v, order);
          rewrite(v, order);
        }
      },
      what);
}

// How a group-limited router ranks its groups (LimitGroups).
enum class GroupScore {
  kTopTwoSum,  ///< the sum of the group's two best scores (DeepSeek-V3's noaux_tc)
  kMax,        ///< the group's best score (DeepSeek-V2's group_limited_greedy)
};

// Group-limited routing on one token's scores v[0..e), in place: the experts form `groups` equal groups
// in index order; the `keep` groups with the best group score (ties to the lower group) keep their
// scores, every other score becomes `masked`.
void LimitGroups(double* v, int64_t e, int64_t groups, int64_t keep, GroupScore score, double masked);

// PhiMoE's sparsemixer (eval) on one token's router logits v[0..e), e >= 2: writes every expert's routing
// weight to w, nonzero for the two experts it chooses (PhiMoeSparseMoeBlock._sparsemixer_eval, EasyDeL
// 090a03b2 easydel/modules/phimoe/modeling_phimoe.py). `jitter` is router_jitter_noise.
void SparseMixerRow(const double* v, int64_t e, double jitter, double* w);

// "/dir" of a relative parameter name "dir/leaf", "" for a bare leaf: the module a projection belongs to.
inline std::string Parent(const std::string& name) {
  const size_t slash = name.rfind('/');
  return slash == std::string::npos ? "" : "/" + name.substr(0, slash);
}

class ForwardPass {
 public:
  ForwardPass(const ModelDesc& m, Spmd& spmd, const ParamLookup& param);

  std::vector<Activation> Run(const DistTensor& ids);

  // Run in the pieces a pipeline stage runs (kernels/pipeline_forward.h): Embed, each Layer, Head.
  /// The embedding of `ids` ("embed"), in the hidden-state layout.
  Activation Embed(const DistTensor& ids);
  /// Decoder layer `layer` on the hidden state ("layer N").
  DistTensor Layer(DistTensor h, int64_t layer);
  /// The final norm and the head: the logits, in the loss's layout.
  Activation Head(DistTensor h);
  /// What the KV cache's prefill stored (with ModelDesc::cache_axes), in the layers' order.
  std::vector<Activation> TakeCache() { return std::move(cache_); }

 private:
  const DistTensor& P(const std::string& name) const { return param_(m_.Param(name)); }

  // Prefill writes the layer's keys and values into the cache in the cache's own layout (a reshard
  // when it differs from the attention layout), plus indexs (tokens written) and starts (0) per sequence.
  // A sliding-window layer keeps its last `sliding_window` tokens, a chunked one `attention_chunk_size`
  // (docs/MEMORY.md, "Serving").
  void StoreCache(const DistTensor& key, const DistTensor& value);

  // A linear-attention layer (Qwen3-Next) caches no keys or values but its conv state [B, channels, kernel]
  // (kvdtype) and recurrent state [B, value heads, key dim, value dim] (float32), batch-sharded like the
  // cache's index vectors and whole otherwise (docs/MEMORY.md, "Serving").
  void StoreLinearState(DistTensor conv, DistTensor recurrent);

  // x [B, S, in] . W (+ b), W [in, out] or [out, in] as the structure's kernels are. `user`: the constraint
  // the caller puts on the result next (a projection back into the residual stream), which XLA's propagation
  // follows (Spmd::Dot).
  DistTensor Linear(DistTensor x, const std::string& prefix, bool bias = false, const DistSpec* user = nullptr);

  // RMS norm over the last dim without a weight (Llama4TextL2Norm).
  DistTensor L2Norm(DistTensor x, const std::string& what);

  // An RMSNorm's scale: its weight, or 1 + weight for zero-centred norms (Qwen3NextRMSNorm).
  DistTensor NormWeight(const std::string& name);

  DistTensor RmsNorm(DistTensor x, const DistTensor& weight, const std::string& what);

  DistTensor LayerNorm(DistTensor x, const std::string& prefix);

  // The structure's norm kind (RMS or LayerNorm) under `name`, a full parameter path.
  DistTensor Norm(DistTensor x, const std::string& name);

  // Rotary embedding over the last dim of [B, S, H, D] at each token's global position: rotate-half
  // (NeoX) on the first rotary_dim of D (all of it by default; GLM's partial_rotary_factor rotates a part
  // and passes the rest, transformers modeling_glm4_moe.py apply_rotary_pos_emb), or on (even, odd) pairs
  // (Llama 4's complex product, modeling_llama4.py apply_rotary_emb). Frequencies theta^(-2i / rotary_dim).
  DistTensor Rope(DistTensor x, const std::string& what);

  // The current layer's mask beyond causality (layer_types): a sliding window (HF sliding_window_overlay:
  // keys within window - 1 tokens back) or chunked attention (Llama 4: keys in the query's chunk).
  int64_t LayerWindow() const;
  int64_t LayerChunk() const;

  // Scaled, masked scores whose query position is dim `q` and key position dim `k`.
  DistTensor MaskScores(DistTensor scores, int q, int k, double scale);

  // Causal softmax over scores whose query position is dim `q` and key position dim `k` (the last).
  DistTensor CausalSoftmax(DistTensor scores, int q, int k, double scale, const std::string& what);

  // Grouped-query attention on q [B, S, Hq, D], k and v [B, T, Hkv, D] -> [B, S, Hq * D].
  DistTensor Attend(DistTensor q, DistTensor k, DistTensor v, const std::string& what);

  DistTensor Heads(DistTensor x, int64_t heads, const std::string& what);

  // A fused q|k|v projection's output split by the structure's layout into q [B, S, H, D], k and v.
  void SplitQkv(DistTensor qkv, const std::string& what, DistTensor* q, DistTensor* k, DistTensor* v);

  // The layer's token mixer: Gated DeltaNet on linear_attention layers, MLA, or grouped-query attention.
  DistTensor Attention(DistTensor x, int64_t layer, const std::string& base);

  DistTensor GroupedQueryAttention(DistTensor x, const std::string& base);

  DistTensor MlaAttention(DistTensor x, const std::string& base);

  DistTensor Activate(DistTensor x);

  // A SwiGLU MLP of gate_proj / up_proj / down_proj under `p` (the shared experts).
  DistTensor GatedMlp(DistTensor x, const std::string& p);

  // The structure's dense MLP under the layer `base`.
  DistTensor DenseMlp(DistTensor x, const std::string& base);

  // Top-k routing weights [B, S, E] (zero for unselected experts).
  DistTensor Route(DistTensor x, const std::string& p);

  // The routed experts of one MoE block as the fused path runs them on a device's expert shard.
  struct RoutedExperts {
    /// (tokens [B, S, H], routing weights [B, S, E] sharded like the experts) -> each local expert's
    /// output on every token [E, B, S, H], partial over the expert tensor axes.
    std::function<DistTensor(const DistTensor& tokens, const DistTensor& weights)> outputs;
    std::string kernel;            ///< a stacked expert kernel [E, ...]: where the experts lie
    std::string down_bias;         ///< [E, H] added to each expert's output ("" = none)
    bool weighted_outputs = true;  ///< combine by the routing weights (false: Llama 4 scales the inputs)
  };
  // EasyDeL's fused MoE (kernels/model_fused_moe.cc): entry gathers, local experts, psum_scatter over
  // tp', ragged all-to-all over ep', unpermute. x [B, S, H], weights [B, S, E] -> [B, S, H].
  DistTensor FusedMoe(DistTensor x, DistTensor weights, const RoutedExperts& experts, const std::string& p);
  // A stacked expert tensor in the fused path's layout: experts over ep', `tensor_dim` over tp' (0: none).
  DistTensor ExpertKernel(const std::string& name, int tensor_dim);
  // The axes the expert dim is split over in the fused path, given a stored expert tensor.
  PartitionSpec::Entry ExpertShardAxes(const DistTensor& stored) const;

  // Experts of each ExpertsKind: what FusedMoe runs on a device's expert shard.
  RoutedExperts GatedSiluExperts(const std::string& p);                         // model_experts.cc
  RoutedExperts HalvesSiluExperts(const std::string& p);                        // model_experts.cc
  RoutedExperts InterleavedClampedGluExperts(const std::string& p);             // model_gpt_oss.cc
  RoutedExperts SplitClampedGluExperts(const std::string& p);                   // model_gpt_oss.cc
  DistTensor ClampedGlu(DistTensor gate, DistTensor up, const std::string& p);  // model_gpt_oss.cc

  // The layouts of the routed experts' kernels (schemas::ExpertsLayout), in model_experts.cc. `role`: the
  // kernel maps hidden -> expert width (an input projection: gate, up, gate_up) or back (the output one).
  enum class ExpertRole { kInput, kOutput };
  // The full name of expert kernel `name` of the block `p` (its `kernel` leaf, unless the name is the parameter).
  std::string ExpertParam(const std::string& p, const std::string& name) const;
  // Every expert's kernel as one tensor [E, in, out] (the fused path's view), laid out as stored: a
  // transpose of an experts-last kernel, the packed rows split into experts. Rank-2 tensors (biases [E, n])
  // come as they are. A parameter still, uncharged to the live meter.
  DistTensor StackedExperts(const std::string& name, ExpertRole role);
  // The expert loop's view of expert kernel `name`: ExpertLoopKernel gathers the stored kernel's expert dim
  // (the packed rows) once per layer, the one gather XLA's CSE leaves of the static slices of every expert
  // (an empty tensor for per-expert modules); ExpertOf gives expert e's kernel [in, out], sliced out of that
  // or, for per-expert modules, the module whose name has e for "{e}".
  DistTensor ExpertLoopKernel(const std::string& name);
  DistTensor ExpertOf(const DistTensor& gathered, const std::string& name, int64_t e, ExpertRole role);
  // The module's own loop over experts (ExpertsExecution::kExpertLoop): x [B, S, H], weights [B, S, E] ->
  // sum over e of weights[..., e] * mlp_e(x), each expert's output in `out_spec`.
  DistTensor ExpertLoop(const DistTensor& x, const DistTensor& weights, const std::string& p, const DistSpec& out_spec);

  // EasyDeL c14e25c9's own MoE executions: gpt-oss's per-token take of the chosen experts' kernels
  // (ExpertsExecution::kPerTokenGather, model_gpt_oss.cc) and Llama 4's E passes of the stacked experts over
  // score-scaled, position-chunked tokens (kScoreMaskedLoop, model_llama4.cc). x [B, S, H], weights or scores
  // [B, S, E] -> [B, S, H].
  DistTensor PerTokenGatherExperts(const DistTensor& x, const DistTensor& weights, const std::string& p);
  DistTensor ScoreMaskedLoop(const DistTensor& x, const DistTensor& scores, const std::string& p,
                             const DistSpec& out_spec);

  // Routers of each RouterKind: routing weights [B, S, E], zero for unselected experts.
  DistTensor TopKSoftmaxRouter(const DistTensor& x, const std::string& p);  // model_gpt_oss.cc
  DistTensor TopKSigmoidRouter(const DistTensor& x, const std::string& p);  // model_llama4.cc
  DistTensor SparseMixerRouter(const DistTensor& x, const std::string& p);  // model_phimoe.cc

  // The MoE block under `p`: shared expert, router, routed experts.
  DistTensor MoeBlock(DistTensor x, const std::string& p);

  DistTensor Mlp(DistTensor x, int64_t layer, const std::string& base);

  DistTensor DecoderLayer(DistTensor h, int64_t layer);

  DistTensor SinkSoftmax(DistTensor scores, double scale, const std::string& what);         // model_gpt_oss.cc
  DistTensor GatedDeltaNet(DistTensor x, const std::string& p);                             // model_qwen3_next.cc
  DistTensor CausalConv(DistTensor x, const std::string& weight, const std::string& what);  // model_qwen3_next.cc

  const ModelDesc& m_;
  Spmd& s_;
  const ParamLookup& param_;
  DistSpec hidden_spec_, heads_spec_, cache_spec_, cache_index_spec_;
  int64_t layer_ = 0;
  std::vector<Activation> cache_;
};

}  // namespace easyplan::kernels::internal

#endif  // EASYPLAN_KERNELS_FORWARD_PASS_H_
