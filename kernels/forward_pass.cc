// The reference forward pass (kernels/forward_pass.h), built from the family's forward structure
// (schemas/forwards.yaml): embedding, norms, rotary embedding, attention (grouped-query with separate or
// fused projections, DeepSeek's MLA), gated and plain MLPs, MoE routing and experts, and the decoder layer
// (sequential or parallel) that composes them.

#include "kernels/forward_pass.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace easyplan::kernels::internal {

ForwardPass::ForwardPass(const ModelDesc& m, Spmd& spmd, const ParamLookup& param) : m_(m), s_(spmd), param_(param) {
  const Mesh& mesh = spmd.geo().mesh();
  hidden_spec_ = ActivationSpec(mesh, {m.axes.batch, m.axes.sequence, m.axes.hidden_state});
  heads_spec_ = ActivationSpec(mesh, {m.axes.batch, m.axes.sequence, m.axes.head, {}});
  if (m.cache_axes) {
    cache_spec_ = ActivationSpec(mesh, *m.cache_axes);
    cache_index_spec_ = ActivationSpec(mesh, m.cache_index_axes);
  }
}

std::vector<Activation> ForwardPass::Run(const DistTensor& ids) {
  std::vector<Activation> out{Embed(ids)};
  DistTensor h = out.back().value;
  for (int64_t layer = 0; layer < m_.layers; ++layer) {
    h = Layer(std::move(h), layer);
    out.push_back({fmt::format("layer {}", layer), h});
  }
  out.push_back(Head(std::move(h)));
  std::vector<Activation> cache = TakeCache();
  out.insert(out.end(), std::make_move_iterator(cache.begin()), std::make_move_iterator(cache.end()));
  return out;
}

Activation ForwardPass::Embed(const DistTensor& ids) {
  const schemas::ForwardStructure& f = m_.forward;
  s_.comm().SetScope("embed");
  DistTensor h = s_.Embed(P(f.embedding), ids, "embedding lookup");
  if (!f.positions.empty()) {
    DistTensor pos = s_.MapIndexed(ids, [](double, const Dims& index) { return static_cast<double>(index[1]); });
    h = s_.Add(std::move(h), s_.Embed(P(f.positions), pos, "position lookup"), "token + position embeddings");
  }
  if (f.scale_embedding) {  // Gemma: the embedding times sqrt(hidden_size)
    const double scale = std::sqrt(static_cast<double>(m_.hidden));
    h = s_.Map(std::move(h), [scale](double v) { return v * scale; });
  }
  return {"embed", s_.Reshard(std::move(h), hidden_spec_, "hidden-state constraint")};
}

DistTensor ForwardPass::Layer(DistTensor h, int64_t layer) {
  layer_ = layer;
  s_.comm().SetScope(fmt::format("layer {}", layer));
  return DecoderLayer(std::move(h), layer);
}

Activation ForwardPass::Head(DistTensor h) {
  const schemas::ForwardStructure& f = m_.forward;
  // The peak through the last layer: what `easyplan memory` calls activations (the logits block that
  // follows is its own figure).
  if (LiveMeter* meter = s_.meter()) meter->Mark();
  s_.comm().SetScope("final");
  h = Norm(std::move(h), f.final_norm);
  DistTensor logits = m_.tied_embeddings
                          ? s_.Dot(std::move(h), P(f.embedding), DotDims{{}, {}, {2}, {1}}, "lm_head (tied)")
                          : s_.Dot(std::move(h), P(f.head), DotDims{{}, {}, {2}, {0}}, "lm_head");
  if (m_.head_bias) {  // PhiMoE's lm_head_bias: the head module's bias beside its kernel
    const std::string bias = f.head.substr(0, f.head.rfind('/') + 1) + "bias";
    logits = s_.Add(std::move(logits), s_.Lift(P(bias), 3), "lm_head bias");
  }
  // The loss constrains the logits with the train attributes batch_axis, sequence_axis and
  // hidden_state_axis (ForCausalLMLoss, easydel/infra/loss_utils.py), so the vocab dim lands where hidden
  // states live.
  return {"logits", s_.Reshard(std::move(logits), hidden_spec_, "loss logits constraint"), Activation::Kind::kLogits};
}

// Prefill writes the layer's keys and values into the cache in the cache's own layout (a reshard
// when it differs from the attention layout), plus indexs (tokens written) and starts (0) per sequence.
// A sliding-window layer keeps its last `sliding_window` tokens, a chunked one `attention_chunk_size`
// (docs/MEMORY.md, "Serving").
void ForwardPass::StoreCache(const DistTensor& key, const DistTensor& value) {
  if (!m_.cache_axes) return;
  const std::string layer = std::to_string(layer_);
  const int64_t tokens = key.shape[1], keep = std::max(LayerWindow(), LayerChunk());
  const bool capped = keep > 0 && keep < tokens;
  // The cache is measured as its own figure, not as live activations.
  DistTensor stored_key = s_.Reshard(capped ? s_.Narrow(key, 1, tokens - keep, keep, "kv cache window (key)") : key,
                                     cache_spec_, "kv cache store (key)");
  DistTensor stored_value =
      s_.Reshard(capped ? s_.Narrow(value, 1, tokens - keep, keep, "kv cache window (value)") : value, cache_spec_,
                 "kv cache store (value)");
  s_.Untrack(stored_key);
  s_.Untrack(stored_value);
  cache_.push_back(
      {"cache " + layer + " k", std::move(stored_key), Activation::Kind::kCache, m_.cache_bytes_per_element});
  cache_.push_back(
      {"cache " + layer + " v", std::move(stored_value), Activation::Kind::kCache, m_.cache_bytes_per_element});
  for (const double fill : {static_cast<double>(m_.seq), 0.0}) {  // indexs, starts
    const HostTensor index({m_.batch}, fill);
    cache_.push_back({"cache " + layer + (fill > 0 ? " indexs" : " starts"), s_.Place(index, cache_index_spec_),
                      Activation::Kind::kCache, 4, /*compared=*/false});
  }
}

// A linear-attention layer (Qwen3-Next) caches no keys or values but its conv state [B, channels, kernel]
// (kvdtype) and recurrent state [B, value heads, key dim, value dim] (float32), batch-sharded like the
// cache's index vectors and whole otherwise (docs/MEMORY.md, "Serving").
void ForwardPass::StoreLinearState(DistTensor conv, DistTensor recurrent) {
  const std::string layer = std::to_string(layer_);
  const Mesh& mesh = s_.geo().mesh();
  const PartitionSpec::Entry batch = m_.cache_index_axes.empty() ? PartitionSpec::Entry() : m_.cache_index_axes[0];
  conv = s_.Reshard(std::move(conv), ActivationSpec(mesh, {batch, {}, {}}), "linear state store (conv)");
  recurrent =
      s_.Reshard(std::move(recurrent), ActivationSpec(mesh, {batch, {}, {}, {}}), "linear state store (recurrent)");
  s_.Untrack(conv);
  s_.Untrack(recurrent);
  cache_.push_back({"cache " + layer + " conv", std::move(conv), Activation::Kind::kCache, m_.cache_bytes_per_element});
  cache_.push_back({"cache " + layer + " recurrent", std::move(recurrent), Activation::Kind::kCache, 4});
}

// x [B, S, in] . W (+ b): W is [in, out], or [out, in] when the structure's kernels are (GPT-2's Conv1D).
DistTensor ForwardPass::Linear(DistTensor x, const std::string& prefix, bool bias, const DistSpec* user) {
  const int contracted = m_.forward.kernels_out_in ? 1 : 0;
  DistTensor y =
      s_.Dot(std::move(x), P(prefix + "/kernel"), DotDims{{}, {}, {2}, {contracted}}, prefix, {.user = user});
  if (bias) y = s_.Add(std::move(y), s_.Lift(P(prefix + "/bias"), 3), prefix + " bias");
  return y;
}

// RMS norm over the last dim without a weight (Llama4TextL2Norm).
DistTensor ForwardPass::L2Norm(DistTensor x, const std::string& what) {
  const int last = x.rank() - 1;
  const double n = static_cast<double>(x.shape[static_cast<size_t>(last)]);
  const double eps = m_.norm_eps;
  DistTensor ms = s_.Reduce(s_.Map(x, [](double v) { return v * v; }), last, ReduceOp::kSum, what + " mean square");
  return s_.Binary(
      std::move(x), std::move(ms), [n, eps](double v, double q) { return v / std::sqrt(q / n + eps); }, what);
}

// An RMSNorm's scale: its weight, or 1 + weight for zero-centred norms (Qwen3NextRMSNorm, GemmaRMSNorm).
DistTensor ForwardPass::NormWeight(const std::string& name) {
  if (!m_.forward.zero_centered_norms) return P(name);
  return s_.Map(P(name), [](double w) { return 1.0 + w; });
}

DistTensor ForwardPass::RmsNorm(DistTensor x, const DistTensor& weight, const std::string& what) {
  const int last = x.rank() - 1;
  const double n = static_cast<double>(x.shape[static_cast<size_t>(last)]);
  const double eps = m_.norm_eps;
  DistTensor ms = s_.Reduce(s_.Map(x, [](double v) { return v * v; }), last, ReduceOp::kSum, what + " mean square");
  DistTensor y = s_.Binary(
      std::move(x), std::move(ms), [n, eps](double v, double q) { return v / std::sqrt(q / n + eps); }, what);
  // Lift before the call: argument evaluation order is unspecified, and y is moved into Mul.
  DistTensor lifted = s_.Lift(weight, y.rank());
  return s_.Mul(std::move(y), std::move(lifted), what + " weight");
}

DistTensor ForwardPass::LayerNorm(DistTensor x, const std::string& prefix) {
  const double n = static_cast<double>(x.shape[2]);
  const double eps = m_.norm_eps;
  DistTensor mean = s_.Reduce(x, 2, ReduceOp::kSum, prefix + " mean");
  DistTensor xc = s_.Binary(
      std::move(x), std::move(mean), [n](double v, double s) { return v - s / n; }, prefix);
  DistTensor var = s_.Reduce(s_.Map(xc, [](double v) { return v * v; }), 2, ReduceOp::kSum, prefix + " variance");
  DistTensor y = s_.Binary(
      std::move(xc), std::move(var), [n, eps](double v, double q) { return v / std::sqrt(q / n + eps); }, prefix);
  y = s_.Mul(std::move(y), s_.Lift(P(prefix + "/" + m_.norm_weight), 3), prefix + " scale");
  if (!m_.norm_bias) return y;
  return s_.Add(std::move(y), s_.Lift(P(prefix + "/bias"), 3), prefix + " bias");
}

// The structure's norm over the last dim of [B, S, H] under `name` (a full parameter path).
DistTensor ForwardPass::Norm(DistTensor x, const std::string& name) {
  if (m_.forward.norm == schemas::NormKind::kLayer) return LayerNorm(std::move(x), name);
  return RmsNorm(std::move(x), NormWeight(name + "/" + m_.norm_weight), name);
}

// Rotary embedding over the last dim of [B, S, H, D] at each token's global position: rotate-half
// (NeoX) on the first rotary_dim of D (all of it by default; GLM's partial_rotary_factor rotates a part
// and passes the rest, transformers modeling_glm4_moe.py apply_rotary_pos_emb), or on (even, odd) pairs
// (Llama 4's complex product, modeling_llama4.py apply_rotary_emb). Frequencies theta^(-2i / rotary_dim).
DistTensor ForwardPass::Rope(DistTensor x, const std::string& what) {
  const double theta = m_.rope_theta;
  const int64_t rotary = m_.rotary_dim;
  const bool interleaved = m_.forward.attention.rope == schemas::RopeKind::kInterleaved;
  return s_.Local(
      std::move(x), {3},
      [theta, rotary, interleaved](HostTensor& t, const std::vector<Range>& box) {
        const int64_t d = t.shape[3];
        const int64_t rd = rotary > 0 && rotary < d ? rotary : d, half = rd / 2;
        const int64_t rows = t.size() / d;
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t pos = box[1].first + (r / t.shape[2]) % t.shape[1];
          double* v = t.data.data() + r * d;
          for (int64_t i = 0; i < half; ++i) {
            const double angle =
                static_cast<double>(pos) * std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(rd));
            const int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
            const double x1 = v[a], x2 = v[b];
            v[a] = x1 * std::cos(angle) - x2 * std::sin(angle);
            v[b] = x2 * std::cos(angle) + x1 * std::sin(angle);
          }
        }
      },
      what + " rotary embedding");
}

// The current layer's mask beyond causality (layer_types): a sliding window (HF sliding_window_overlay:
// keys within window - 1 tokens back) or chunked attention (Llama 4: keys in the query's chunk).
int64_t ForwardPass::LayerWindow() const {
  if (static_cast<size_t>(layer_) >= m_.layer_types.size()) return 0;
  return m_.layer_types[static_cast<size_t>(layer_)] == "sliding_attention" ? m_.sliding_window : 0;
}

int64_t ForwardPass::LayerChunk() const {
  if (static_cast<size_t>(layer_) >= m_.layer_types.size()) return 0;
  return m_.layer_types[static_cast<size_t>(layer_)] == "chunked_attention" ? m_.attention_chunk_size : 0;
}

// Scaled, masked scores whose query position is dim `q` and key position dim `k`.
DistTensor ForwardPass::MaskScores(DistTensor scores, int q, int k, double scale) {
  const int64_t window = LayerWindow(), chunk = LayerChunk();
  return s_.MapIndexed(std::move(scores), [q, k, scale, window, chunk](double v, const Dims& index) {
    const int64_t qi = index[static_cast<size_t>(q)], ki = index[static_cast<size_t>(k)];
    const bool masked = ki > qi || (window > 0 && qi - ki >= window) || (chunk > 0 && qi / chunk != ki / chunk);
    return masked ? kMasked : v * scale;
  });
}

// Causal softmax over scores whose query position is dim `q` and key position dim `k` (the last).
DistTensor ForwardPass::CausalSoftmax(DistTensor scores, int q, int k, double scale, const std::string& what) {
  return s_.Softmax(MaskScores(std::move(scores), q, k, scale), k, what + " softmax");
}

// Grouped-query attention on q [B, S, Hq, D], k and v [B, T, Hkv, D] -> [B, S, Hq * D].
DistTensor ForwardPass::Attend(DistTensor q, DistTensor k, DistTensor v, const std::string& what) {
  const int64_t kv = k.shape[2];
  const int64_t d = q.shape[3];
  q = s_.Split(std::move(q), 2, kv, what + " query groups");  // [B, S, Hkv, G, D]
  // From the scores to the probabilities: what a fused attention kernel keeps on chip.
  const Spmd::AttentionCore core(s_);
  DistTensor scores =
      s_.Dot(std::move(q), std::move(k), DotDims{{0, 2}, {0, 2}, {4}, {3}}, what + " q.k");  // [B,Hkv,S,G,T]
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  scores = m_.forward.attention.sinks.empty() ? CausalSoftmax(std::move(scores), 2, 4, scale, what)
                                              : SinkSoftmax(std::move(scores), scale, what);
  DistTensor o =
      s_.Dot(std::move(scores), std::move(v), DotDims{{0, 1}, {0, 2}, {4}, {1}}, what + " p.v");  // [B,Hkv,S,G,D]
  o = s_.Transpose(std::move(o), {0, 2, 1, 3, 4});
  o = s_.Merge(std::move(o), 2, what + " heads");
  return s_.Merge(std::move(o), 2, what + " heads");
}

DistTensor ForwardPass::Heads(DistTensor x, int64_t heads, const std::string& what) {
  x = s_.Split(std::move(x), 2, heads, what + " heads");
  return s_.Reshard(std::move(x), heads_spec_, what + " head constraint");
}

// The fused projection's output [B, S, width] split into q [B, S, H, D], k and v [B, S, KV, D].
void ForwardPass::SplitQkv(DistTensor qkv, const std::string& what, DistTensor* q, DistTensor* k, DistTensor* v) {
  const int64_t heads = m_.heads, kv = m_.kv_heads, d = m_.head_dim;
  switch (m_.forward.attention.layout) {
    case schemas::FusedQkvLayout::kThirds: {                      // [3, H * D]
      qkv = s_.Split(std::move(qkv), 2, 3, what + " fused qkv");  // [B, S, 3, H * D]
      auto part = [&](int64_t i, int64_t n) {
        return Heads(s_.Squeeze(s_.Narrow(qkv, 2, i, 1, what + " split qkv"), 2), n, what + " qkv");
      };
      *q = part(0, heads);
      *k = part(1, kv);
      *v = part(2, kv);
      return;
    }
    case schemas::FusedQkvLayout::kKvGroups: {  // [KV, G + 2, D]
      const int64_t group = heads / kv;
      qkv = s_.Split(std::move(qkv), 2, kv, what + " kv groups");           // [B, S, KV, (G + 2) D]
      qkv = s_.Split(std::move(qkv), 3, group + 2, what + " group heads");  // [B, S, KV, G + 2, D]
      *q = s_.Merge(s_.Narrow(qkv, 3, 0, group, what + " query"), 2, what + " query heads");
      *k = s_.Squeeze(s_.Narrow(qkv, 3, group, 1, what + " key"), 3);
      *v = s_.Squeeze(s_.Narrow(std::move(qkv), 3, group + 1, 1, what + " value"), 3);
      *q = s_.Reshard(std::move(*q), heads_spec_, what + " q head constraint");
      *k = s_.Reshard(std::move(*k), heads_spec_, what + " k head constraint");
      *v = s_.Reshard(std::move(*v), heads_spec_, what + " v head constraint");
      return;
    }
    case schemas::FusedQkvLayout::kBlocks:  // [H * D | KV * D | KV * D]
    case schemas::FusedQkvLayout::kNone:
      *q = Heads(s_.Narrow(qkv, 2, 0, heads * d, what + " query"), heads, what + " q");
      *k = Heads(s_.Narrow(qkv, 2, heads * d, kv * d, what + " key"), kv, what + " k");
      *v = Heads(s_.Narrow(std::move(qkv), 2, (heads + kv) * d, kv * d, what + " value"), kv, what + " v");
      return;
  }
}

DistTensor ForwardPass::GroupedQueryAttention(DistTensor x, const std::string& base) {
  const schemas::ForwardStructure::Attention& a = m_.forward.attention;
  const std::string p = base + Parent(a.o);
  const bool b = m_.attention_bias;
  const bool full_width_norm = m_.qk_norm && a.qk_norm == schemas::QkNormKind::kFullWidth;
  DistTensor q, k, v, gate;
  if (!a.qkv.empty()) {
    SplitQkv(Linear(std::move(x), base + "/" + a.qkv, b), p, &q, &k, &v);
  } else {
    DistTensor q_proj = Linear(x, base + "/" + a.q, b);
    DistTensor k_proj = Linear(x, base + "/" + a.k, b);
    if (full_width_norm) {  // Olmo2Attention: RMSNorm over the whole q and k projections, before the head split
      q_proj = RmsNorm(std::move(q_proj), NormWeight(base + "/" + a.q_norm + "/kernel"), base + "/" + a.q_norm);
      k_proj = RmsNorm(std::move(k_proj), NormWeight(base + "/" + a.k_norm + "/kernel"), base + "/" + a.k_norm);
    }
    q = Heads(std::move(q_proj), m_.heads, base + "/" + a.q);
    if (a.output_gate) {  // Qwen3NextAttention: per head [query, gate] (torch.chunk of head_dim * 2)
      q = s_.Split(std::move(q), 3, 2, p + " query / gate");                                     // [B, S, H, 2, D]
      gate = s_.Merge(s_.Squeeze(s_.Narrow(q, 3, 1, 1, p + " gate"), 3), 2, p + " gate heads");  // [B, S, H * D]
      q = s_.Squeeze(s_.Narrow(std::move(q), 3, 0, 1, p + " query"), 3);
    }
    k = Heads(std::move(k_proj), m_.kv_heads, base + "/" + a.k);
    v = Heads(Linear(std::move(x), base + "/" + a.v, b), m_.kv_heads, base + "/" + a.v);
  }
  if (m_.qk_norm && !full_width_norm) {
    q = RmsNorm(std::move(q), NormWeight(base + "/" + a.q_norm + "/kernel"), base + "/" + a.q_norm);
    k = RmsNorm(std::move(k), NormWeight(base + "/" + a.k_norm + "/kernel"), base + "/" + a.k_norm);
  }
  const bool rope = a.rope != schemas::RopeKind::kNone && (static_cast<size_t>(layer_) >= m_.nope_layers.size() ||
                                                           !m_.nope_layers[static_cast<size_t>(layer_)]);
  if (rope) {
    q = Rope(std::move(q), p + " q");
    k = Rope(std::move(k), p + " k");
  }
  if (rope && m_.l2_qk_norm) {  // Llama4TextL2Norm: x / sqrt(mean(x^2) + eps), no weight
    q = L2Norm(std::move(q), p + " q l2 norm");
    k = L2Norm(std::move(k), p + " k l2 norm");
  }
  StoreCache(k, v);
  DistTensor o = Attend(std::move(q), std::move(k), std::move(v), p);
  if (a.output_gate) {
    gate = s_.Map(std::move(gate), [](double g) { return 1.0 / (1.0 + std::exp(-g)); });
    o = s_.Mul(std::move(o), std::move(gate), p + " output gate");
  }
  return Linear(std::move(o), base + "/" + a.o, m_.o_bias, &hidden_spec_);
}

DistTensor ForwardPass::MlaAttention(DistTensor x, const std::string& base) {
  const std::string p = base + Parent(m_.forward.attention.o);
  const int64_t nope = m_.qk_nope_head_dim, rope = m_.qk_rope_head_dim;
  DistTensor q;
  if (m_.q_lora_rank > 0) {
    DistTensor qa = RmsNorm(Linear(x, p + "/q_a_proj"), P(p + "/q_a_layernorm/kernel"), p + "/q_a_layernorm");
    q = Linear(std::move(qa), p + "/q_b_proj");
  } else {
    q = Linear(x, p + "/q_proj");
  }
  q = Heads(std::move(q), m_.heads, p + " q");  // [B, S, H, nope + rope]
  DistTensor q_nope = s_.Narrow(q, 3, 0, nope, p + " q_nope");
  DistTensor q_pe = Rope(s_.Narrow(std::move(q), 3, nope, rope, p + " q_pe"), p + " q_pe");
  DistTensor kv_a = Linear(std::move(x), p + "/kv_a_proj_with_mqa");  // [B, S, kv_lora + rope]
  DistTensor k_pe = s_.Narrow(kv_a, 2, m_.kv_lora_rank, rope, p + " k_pe");
  k_pe = s_.Squeeze(Rope(s_.Unsqueeze(std::move(k_pe), 2), p + " k_pe"), 2);  // [B, T, rope]
  DistTensor c = s_.Narrow(std::move(kv_a), 2, 0, m_.kv_lora_rank, p + " compressed kv");
  c = RmsNorm(std::move(c), P(p + "/kv_a_layernorm/kernel"), p + "/kv_a_layernorm");
  DistTensor kv = Heads(Linear(std::move(c), p + "/kv_b_proj"), m_.heads, p + " kv");  // [B, T, H, nope + v]
  DistTensor k_nope = s_.Narrow(kv, 3, 0, nope, p + " k_nope");
  DistTensor value = s_.Narrow(std::move(kv), 3, nope, m_.v_head_dim, p + " value");
  if (m_.cache_axes) {  // the cached key is [k_nope, k_pe] per head, k_pe shared by every head
    DistTensor shared_pe = s_.Broadcast(s_.Unsqueeze(k_pe, 2), 2, m_.heads);
    StoreCache(s_.Concat(k_nope, std::move(shared_pe), 3, p + " cached key"), value);
  }
  const Spmd::AttentionCore core(s_);
  DistTensor s1 = s_.Dot(std::move(q_nope), std::move(k_nope), DotDims{{0, 2}, {0, 2}, {3}, {3}}, p + " q_nope.k_nope");
  DistTensor s2 = s_.Dot(std::move(q_pe), std::move(k_pe), DotDims{{0}, {0}, {3}, {2}}, p + " q_pe.k_pe");  // [B,S,H,T]
  s2 = s_.Transpose(std::move(s2), {0, 2, 1, 3});
  DistTensor scores = s_.Add(std::move(s1), std::move(s2), p + " scores");  // [B, H, S, T]
  scores = CausalSoftmax(std::move(scores), 2, 3, 1.0 / std::sqrt(static_cast<double>(nope + rope)), p);
  DistTensor o =
      s_.Dot(std::move(scores), std::move(value), DotDims{{0, 1}, {0, 2}, {3}, {1}}, p + " p.v");  // [B,H,S,V]
  o = s_.Transpose(std::move(o), {0, 2, 1, 3});
  o = s_.Merge(std::move(o), 2, p + " heads");
  return Linear(std::move(o), p + "/o_proj", false, &hidden_spec_);
}

// One activation of the structure's MLP kind.
DistTensor ForwardPass::Activate(DistTensor x) {
  switch (m_.forward.mlp.activation) {
    case schemas::ActivationKind::kGelu:  // exact GELU
      return s_.Map(std::move(x), [](double z) { return 0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0))); });
    case schemas::ActivationKind::kGeluTanh:  // gelu_new / gelu_pytorch_tanh
      return s_.Map(std::move(x), [](double z) {
        return 0.5 * z * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (z + 0.044715 * z * z * z)));
      });
    case schemas::ActivationKind::kSilu:
      break;
  }
  return s_.Map(std::move(x), [](double v) { return v / (1.0 + std::exp(-v)); });
}

// A shared expert: a SwiGLU MLP of gate_proj, up_proj and down_proj under `p`, without biases.
DistTensor ForwardPass::GatedMlp(DistTensor x, const std::string& p) {
  DistTensor gate = s_.Map(Linear(x, p + "/gate_proj"), [](double v) { return v / (1.0 + std::exp(-v)); });
  DistTensor up = Linear(std::move(x), p + "/up_proj");
  return Linear(s_.Mul(std::move(gate), std::move(up), p + " silu(gate) * up"), p + "/down_proj", false, &hidden_spec_);
}

// The dense MLP of the structure: gated (gate and up separate, or one gate_up in halves) or plain.
DistTensor ForwardPass::DenseMlp(DistTensor x, const std::string& base) {
  const schemas::ForwardStructure::Mlp& mlp = m_.forward.mlp;
  const bool b = m_.mlp_bias;
  if (mlp.kind == schemas::MlpKind::kPlain) {
    DistTensor up = Activate(Linear(std::move(x), base + "/" + mlp.up, b));
    return Linear(std::move(up), base + "/" + mlp.down, b, &hidden_spec_);
  }
  DistTensor gate, up;
  const std::string p = base + Parent(mlp.gate_up.empty() ? mlp.gate : mlp.gate_up);
  if (!mlp.gate_up.empty()) {  // Phi3MLP: gate, up = gate_up_proj(x).chunk(2, dim=-1)
    DistTensor gate_up = Linear(std::move(x), base + "/" + mlp.gate_up, b);
    const int64_t width = gate_up.shape[2] / 2;
    gate = s_.Narrow(gate_up, 2, 0, width, p + " gate");
    up = s_.Narrow(std::move(gate_up), 2, width, width, p + " up");
    gate = Activate(std::move(gate));
  } else {
    gate = Activate(Linear(x, base + "/" + mlp.gate, b));
    up = Linear(std::move(x), base + "/" + mlp.up, b);
  }
  return Linear(s_.Mul(std::move(gate), std::move(up), p + " act(gate) * up"), base + "/" + mlp.down, b, &hidden_spec_);
}

void LimitGroups(double* v, int64_t e, int64_t groups, int64_t keep, GroupScore score, double masked) {
  const int64_t per_group = e / groups;
  std::vector<std::pair<double, int64_t>> group_score;  // (score, -group): ties rank the lower group first
  for (int64_t g = 0; g < groups; ++g) {
    std::vector<double> members(v + g * per_group, v + (g + 1) * per_group);
    std::sort(members.rbegin(), members.rend());
    const double top_two = members[0] + (per_group > 1 ? members[1] : 0.0);
    group_score.emplace_back(score == GroupScore::kMax ? members[0] : top_two, -g);
  }
  std::sort(group_score.rbegin(), group_score.rend());
  for (int64_t i = keep; i < groups; ++i) {
    const int64_t g = -group_score[static_cast<size_t>(i)].second;
    for (int64_t j = g * per_group; j < (g + 1) * per_group; ++j) v[j] = masked;
  }
}

// Top-k routing weights [B, S, E] (zero for unselected experts): softmax scores (Mixtral, Qwen-MoE), with
// group-limited choice over them (DeepSeek-V2, DeepseekV2MoE._select_experts_static at EasyDeL 090a03b2
// easydel/modules/deepseek_v2/modeling_deepseek.py: a group's score is its best expert's, the experts of the
// other groups score 0), or sigmoid scores, biased for the choice, groups ranked by their top two
// (DeepSeek-V3).
DistTensor ForwardPass::Route(DistTensor x, const std::string& p) {
  const schemas::ForwardStructure::Moe& moe = m_.forward.moe;
  DistTensor logits =
      s_.Dot(std::move(x), P(p + "/" + moe.router + "/kernel"), DotDims{{}, {}, {2}, {0}}, p + "/" + moe.router);
  DistTensor scores, choice;
  const bool sigmoid = moe.router_kind == schemas::RouterKind::kSigmoidGroupLimited;
  if (sigmoid) {
    scores = s_.Map(std::move(logits), [](double v) { return 1.0 / (1.0 + std::exp(-v)); });
    choice = m_.score_bias ? s_.Add(scores, s_.Lift(P(p + "/" + moe.score_bias), 3), p + " score bias") : scores;
  } else {
    scores = s_.Softmax(std::move(logits), 2, p + " router");
    choice = scores;
  }
  const int64_t k = m_.top_k, groups = m_.n_group, keep_groups = m_.topk_group;
  const GroupScore group_score = sigmoid ? GroupScore::kTopTwoSum : GroupScore::kMax;
  const double masked = sigmoid ? kMasked : 0.0;
  std::function<void(double*, int64_t)> limit;
  if (groups > 1) {
    limit = [groups, keep_groups, group_score, masked](double* v, int64_t e) {
      LimitGroups(v, e, groups, keep_groups, group_score, masked);
    };
  }
  DistTensor mask = RankRows(
      s_, std::move(choice),
      [k](double* v, const std::vector<int64_t>& order) {
        std::fill(v, v + order.size(), 0.0);
        for (int64_t i = 0; i < k; ++i) v[order[static_cast<size_t>(i)]] = 1.0;
      },
      p + " top-k", std::move(limit));
  DistTensor weights = s_.Mul(std::move(mask), std::move(scores), p + " routing weights");
  if (m_.norm_topk_prob) {
    DistTensor sum = s_.Reduce(weights, 2, ReduceOp::kSum, p + " top-k sum");
    weights = s_.Binary(
        std::move(weights), std::move(sum), [](double w, double z) { return w / (z + 1e-20); }, p + " normalize");
  }
  if (m_.routed_scaling != 1.0) {
    const double f = m_.routed_scaling;
    weights = s_.Map(std::move(weights), [f](double w) { return w * f; });
  }
  return weights;
}

// The MoE block of the structure: the shared expert (plain or sigmoid-gated), the router, and the routed
// experts, through EasyDeL's fused MoE path or the module's own loop over experts.
DistTensor ForwardPass::MoeBlock(DistTensor x, const std::string& p) {
  const schemas::ForwardStructure::Moe& moe = m_.forward.moe;
  DistSpec block_spec = hidden_spec_;
  if (moe.flatten_tokens) {
    // PhiMoeSparseMoeBlock: hidden_states.reshape(-1, hidden_dim). The merge gathers a sharded sequence
    // dim (Spmd::Merge); the reference keeps the tokens as [B, S, H] in the merged dim's layout (batch axes
    // only), which is what splitting the merge back gives. Each expert's output lands there too.
    const int64_t batch = x.shape[0];
    x = s_.Split(s_.Merge(std::move(x), 0, p + " flattened tokens"), 0, batch, p + " flattened tokens as [B, S]");
    block_spec = ActivationSpec(s_.geo().mesh(), {m_.axes.batch, {}, m_.axes.hidden_state});
  }
  DistTensor shared;
  if (moe.shared_kind != schemas::SharedExpertKind::kNone) {
    shared = GatedMlp(x, p + "/" + moe.shared);
    if (moe.shared_kind ==
        schemas::SharedExpertKind::kSigmoidGated) {  // Qwen3NextSparseMoeBlock, Qwen2MoeSparseMoeBlock
      DistTensor gate = s_.Map(Linear(x, p + "/" + moe.shared_gate),
                               [](double v) { return 1.0 / (1.0 + std::exp(-v)); });  // [B, S, 1]
      shared = s_.Mul(std::move(shared), std::move(gate), p + " gated shared expert");
    }
  }
  DistTensor weights;
  switch (moe.router_kind) {
    case schemas::RouterKind::kTopKSoftmax:
      weights = TopKSoftmaxRouter(x, p);
      break;
    case schemas::RouterKind::kTopKSigmoidInput:
      weights = TopKSigmoidRouter(x, p);
      break;
    case schemas::RouterKind::kSparseMixer:
      weights = SparseMixerRouter(x, p);
      break;
    case schemas::RouterKind::kSoftmaxTopK:
    case schemas::RouterKind::kSigmoidGroupLimited:
    case schemas::RouterKind::kSoftmaxGroupLimited:
      weights = Route(x, p);
      break;
  }
  DistTensor routed;
  if (moe.execution == schemas::ExpertsExecution::kExpertLoop) {
    routed = ExpertLoop(x, weights, p, block_spec);
  } else if (moe.execution == schemas::ExpertsExecution::kPerTokenGather) {
    routed = PerTokenGatherExperts(x, weights, p);
  } else if (moe.execution == schemas::ExpertsExecution::kScoreMaskedLoop) {
    routed = ScoreMaskedLoop(x, weights, p, block_spec);
  } else {
    RoutedExperts experts;
    switch (moe.experts) {
      case schemas::ExpertsKind::kInterleavedClampedGlu:
        experts = InterleavedClampedGluExperts(p);
        break;
      case schemas::ExpertsKind::kSplitClampedGlu:
        experts = SplitClampedGluExperts(p);
        break;
      case schemas::ExpertsKind::kFusedHalvesSilu:
        experts = HalvesSiluExperts(p);
        break;
      case schemas::ExpertsKind::kGatedSilu:
        experts = GatedSiluExperts(p);
        break;
    }
    routed = FusedMoe(std::move(x), std::move(weights), experts, p);
  }
  if (moe.shared_kind == schemas::SharedExpertKind::kNone) return routed;
  return s_.Add(std::move(routed), std::move(shared), p + " routed + shared");
}

DistTensor ForwardPass::Mlp(DistTensor x, int64_t layer, const std::string& base) {
  const auto l = static_cast<size_t>(layer);
  const bool sparse = l < m_.sparse_layers.size() && m_.sparse_layers[l];
  return sparse ? MoeBlock(std::move(x), base + "/" + m_.forward.moe.block) : DenseMlp(std::move(x), base);
}

DistTensor ForwardPass::Attention(DistTensor x, int64_t layer, const std::string& base) {
  const schemas::ForwardStructure::Attention& a = m_.forward.attention;
  const auto l = static_cast<size_t>(layer);
  const bool linear = !a.linear.empty() && l < m_.layer_types.size() && m_.layer_types[l] == "linear_attention";
  if (linear) return GatedDeltaNet(std::move(x), base + "/" + a.linear);
  if (a.kind == schemas::AttentionKind::kLatent && m_.kv_lora_rank > 0) return MlaAttention(std::move(x), base);
  return GroupedQueryAttention(std::move(x), base);
}

// A decoder layer: sequential (h += attn(norm(h)); h += mlp(norm(h))) or parallel (h += attn(norm(h)) +
// mlp(norm'(h)), the attention's normed input when there is no MLP norm), with the structure's optional
// output norms on each branch (Gemma 2's sandwich norms, OLMo 2's post-norms).
DistTensor ForwardPass::DecoderLayer(DistTensor h, int64_t layer) {
  const std::string base = fmt::format("{}/{}", m_.forward.layers, layer);
  auto norm = [&](const DistTensor& x, const std::string& slot) {
    return slot.empty() ? x : Norm(x, base + "/" + slot);
  };
  DistTensor x = norm(h, m_.attention_norm);
  DistTensor a = Attention(m_.forward.block == schemas::BlockKind::kParallel ? x : std::move(x), layer, base);
  if (!m_.attention_output_norm.empty()) a = Norm(std::move(a), base + "/" + m_.attention_output_norm);
  a = s_.Reshard(std::move(a), hidden_spec_, "attention output constraint");
  if (m_.forward.block == schemas::BlockKind::kParallel) {
    DistTensor mlp_in = m_.mlp_norm.empty() ? std::move(x) : Norm(h, base + "/" + m_.mlp_norm);
    DistTensor f = Mlp(std::move(mlp_in), layer, base);
    if (!m_.mlp_output_norm.empty()) f = Norm(std::move(f), base + "/" + m_.mlp_output_norm);
    f = s_.Reshard(std::move(f), hidden_spec_, "mlp output constraint");
    h = s_.Add(std::move(h), s_.Add(std::move(f), std::move(a), "mlp + attention"), "residual");
  } else {
    h = s_.Add(std::move(h), std::move(a), "residual");
    DistTensor f = Mlp(norm(h, m_.mlp_norm), layer, base);
    if (!m_.mlp_output_norm.empty()) f = Norm(std::move(f), base + "/" + m_.mlp_output_norm);
    h = s_.Add(std::move(h), s_.Reshard(std::move(f), hidden_spec_, "mlp output constraint"), "residual");
  }
  return s_.Reshard(std::move(h), hidden_spec_, "hidden-state constraint");
}

}  // namespace easyplan::kernels::internal
