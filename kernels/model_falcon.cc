// Falcon layers of the reference forward pass (transformers src/transformers/models/falcon/modeling_falcon.py,
// FalconDecoderLayer, FalconAttention, FalconMLP), in EasyDeL names (LayerNorm scale / bias, kernels [in, out]).

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "kernels/forward_pass.h"

namespace easyplan::kernels::internal {

// query_key_value's output, in every layout, is [kv heads, heads / kv heads + 2, head_dim]: a group's query
// heads, its key, its value (new_decoder_architecture; classic multi_query is one group of heads + 2, classic
// multi-head heads groups of 3, as FalconAttention._split_heads views them). Rotary (rotate-half over the
// whole head, no ALiBi), scale 1 / sqrt(head_dim). The block is parallel (x + attn(ln(x)) + mlp(ln(x)), with
// ln_attn / ln_mlp or one input_layernorm) unless the tree has post_attention_layernorm (parallel_attn false).
DistTensor ForwardPass::FalconLayer(DistTensor h, int64_t layer) {
  const std::string p = fmt::format("transformer/h/{}", layer);
  const bool bias = m_.attention_bias;
  const int64_t kv = m_.kv_heads, group = m_.heads / m_.kv_heads;
  DistTensor x = LayerNorm(h, p + (m_.falcon_two_norms ? "/ln_attn" : "/input_layernorm"));
  const std::string a = p + "/self_attention";
  DistTensor qkv = Linear(x, a + "/query_key_value", bias);          // [B, S, (heads + 2 kv) hd]
  qkv = s_.Split(std::move(qkv), 2, kv, a + " kv groups");           // [B, S, kv, (G + 2) hd]
  qkv = s_.Split(std::move(qkv), 3, group + 2, a + " group heads");  // [B, S, kv, G + 2, hd]
  DistTensor q = s_.Merge(s_.Narrow(qkv, 3, 0, group, a + " query"), 2, a + " query heads");
  DistTensor k = s_.Squeeze(s_.Narrow(qkv, 3, group, 1, a + " key"), 3);
  DistTensor v = s_.Squeeze(s_.Narrow(std::move(qkv), 3, group + 1, 1, a + " value"), 3);
  q = Rope(s_.Reshard(std::move(q), heads_spec_, a + " q head constraint"), a + " q");
  k = Rope(s_.Reshard(std::move(k), heads_spec_, a + " k head constraint"), a + " k");
  v = s_.Reshard(std::move(v), heads_spec_, a + " v head constraint");
  StoreCache(k, v);
  DistTensor o = Attend(std::move(q), std::move(k), std::move(v), a);
  o = s_.Reshard(Linear(std::move(o), a + "/dense", bias), hidden_spec_, "attention output constraint");
  DistTensor mlp_in;
  if (m_.falcon_sequential) {
    x = DistTensor();
    h = s_.Add(std::move(h), std::move(o), "residual");
    mlp_in = LayerNorm(h, p + "/post_attention_layernorm");
  } else {
    mlp_in = m_.falcon_two_norms ? LayerNorm(h, p + "/ln_mlp") : std::move(x);
  }
  DistTensor f = Linear(std::move(mlp_in), p + "/mlp/dense_h_to_4h", bias);
  f = s_.Map(std::move(f), [](double z) { return 0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0))); });  // exact GELU
  f = s_.Reshard(Linear(std::move(f), p + "/mlp/dense_4h_to_h", bias), hidden_spec_, "mlp output constraint");
  if (!m_.falcon_sequential) f = s_.Add(std::move(f), std::move(o), "mlp + attention");
  h = s_.Add(std::move(h), std::move(f), "residual");
  return s_.Reshard(std::move(h), hidden_spec_, "hidden-state constraint");
}

}  // namespace easyplan::kernels::internal
