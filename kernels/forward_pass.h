#ifndef EASYPLAN_KERNELS_FORWARD_PASS_H_
#define EASYPLAN_KERNELS_FORWARD_PASS_H_

// The reference forward pass (kernels/model.h) as a class, internal to kernels. The shared layers
// (embedding, norms, attention, MLP, MoE routing) and the llama / moe / deepseek / gpt2 decoder layers are
// defined in kernels/forward_pass.cc; the decoder layers of later families are members defined in their own
// files (kernels/model_falcon.cc, model_gpt_oss.cc, model_llama4.cc, model_qwen3_next.cc). Only the class is
// declared here, so each of those files compiles the layers it defines and no others.

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

class ForwardPass {
 public:
  ForwardPass(const ModelDesc& m, Spmd& spmd, const ParamLookup& param);

  std::vector<Activation> Run(const DistTensor& ids);

 private:
  const DistTensor& P(const std::string& name) const { return param_(m_.param_prefix + name); }

  // Prefill writes the layer's keys and values into the cache in the cache's own layout (a reshard
  // when it differs from the attention layout), plus indexs (tokens written) and starts (0) per sequence.
  // A sliding-window layer keeps its last `sliding_window` tokens, a chunked one `attention_chunk_size`
  // (docs/MEMORY.md, "Serving").
  void StoreCache(const DistTensor& key, const DistTensor& value);

  // A linear-attention layer (Qwen3-Next) caches no keys or values but its conv state [B, channels, kernel]
  // (kvdtype) and recurrent state [B, value heads, key dim, value dim] (float32), batch-sharded like the
  // cache's index vectors and whole otherwise (docs/MEMORY.md, "Serving").
  void StoreLinearState(DistTensor conv, DistTensor recurrent);

  // x [B, S, in] . W [in, out] (+ b). `user`: the constraint the caller puts on the result next (a
  // projection back into the residual stream), which XLA's propagation follows (Spmd::Dot).
  DistTensor Linear(DistTensor x, const std::string& prefix, bool bias = false, const DistSpec* user = nullptr);

  // GPT-2's Conv1D in EasyDeL layout: kernel [out, in], y = x . W^T + b.
  DistTensor Conv1D(DistTensor x, const std::string& prefix, const DistSpec* user = nullptr);

  // RMS norm over the last dim without a weight (Llama4TextL2Norm).
  DistTensor L2Norm(DistTensor x, const std::string& what);

  // An RMSNorm's scale: its weight, or 1 + weight for zero-centred norms (Qwen3NextRMSNorm).
  DistTensor NormWeight(const std::string& name);

  DistTensor RmsNorm(DistTensor x, const DistTensor& weight, const std::string& what);

  DistTensor LayerNorm(DistTensor x, const std::string& prefix);

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

  DistTensor LlamaAttention(DistTensor x, const std::string& p);

  DistTensor MlaAttention(DistTensor x, const std::string& p);

  DistTensor GatedMlp(DistTensor x, const std::string& p);

  // Top-k routing weights [B, S, E] (zero for unselected experts).
  DistTensor Route(DistTensor x, const std::string& p);

  // The routed experts (Route's weights) through EasyDeL's fused MoE path (FusedMoe): each device runs its
  // local experts on the tokens: [B,S,H] x [E,H,I] -> [B,S,E,I]; [B,S,E,I] x [E,I,H] -> [E,B,S,H].
  DistTensor Experts(DistTensor x, const std::string& p);

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

  DistTensor Mlp(DistTensor x, int64_t layer, const std::string& base);

  DistTensor DecoderLayer(DistTensor h, int64_t layer);

  DistTensor Gpt2Layer(DistTensor h, int64_t layer);

  // Layers of later families, each defined in its own file.
  DistTensor FalconLayer(DistTensor h, int64_t layer);                                      // model_falcon.cc
  DistTensor SinkSoftmax(DistTensor scores, double scale, const std::string& what);         // model_gpt_oss.cc
  DistTensor GptOssMoe(DistTensor x, const std::string& p);                                 // model_gpt_oss.cc
  DistTensor Llama4Moe(DistTensor x, const std::string& p);                                 // model_llama4.cc
  DistTensor GatedDeltaNet(DistTensor x, const std::string& p);                             // model_qwen3_next.cc
  DistTensor CausalConv(DistTensor x, const std::string& weight, const std::string& what);  // model_qwen3_next.cc
  DistTensor Qwen3NextMoe(DistTensor x, const std::string& p);                              // model_qwen3_next.cc

  const ModelDesc& m_;
  Spmd& s_;
  const ParamLookup& param_;
  DistSpec hidden_spec_, heads_spec_, cache_spec_, cache_index_spec_;
  int64_t layer_ = 0;
  std::vector<Activation> cache_;
};

}  // namespace easyplan::kernels::internal

#endif  // EASYPLAN_KERNELS_FORWARD_PASS_H_
