// The shared layers of the reference forward pass (kernels/forward_pass.h): embedding, norms, rotary
// embedding, attention (grouped-query and DeepSeek's MLA), gated MLP, MoE routing and experts, and the
// llama / moe / deepseek / gpt2 decoder layers.

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
  hidden_spec_ = ActivationSpec(mesh, {m.batch_axes, m.sequence_axes, m.hidden_axes});
  heads_spec_ = ActivationSpec(mesh, {m.batch_axes, m.sequence_axes, m.head_axes, {}});
  if (m.cache_axes) {
    cache_spec_ = ActivationSpec(mesh, *m.cache_axes);
    cache_index_spec_ = ActivationSpec(mesh, m.cache_index_axes);
  }
}

std::vector<Activation> ForwardPass::Run(const DistTensor& ids) {
  std::vector<Activation> out;
  s_.comm().SetScope("embed");
  const std::string embed_name = m_.family == ModelFamily::kGpt2     ? "transformer/wte/embedding"
                                 : m_.family == ModelFamily::kFalcon ? "transformer/word_embeddings/embedding"
                                                                     : "model/embed_tokens/embedding";
  DistTensor h = s_.Embed(P(embed_name), ids, "embedding lookup");
  if (m_.family == ModelFamily::kGpt2) {
    DistTensor pos = s_.MapIndexed(ids, [](double, const Dims& index) { return static_cast<double>(index[1]); });
    h = s_.Add(std::move(h), s_.Embed(P("transformer/wpe/embedding"), pos, "position lookup"), "wte + wpe");
  }
  h = s_.Reshard(std::move(h), hidden_spec_, "hidden-state constraint");
  out.push_back({"embed", h});
  for (int64_t layer = 0; layer < m_.layers; ++layer) {
    layer_ = layer;
    s_.comm().SetScope(fmt::format("layer {}", layer));
    h = m_.family == ModelFamily::kGpt2     ? Gpt2Layer(std::move(h), layer)
        : m_.family == ModelFamily::kFalcon ? FalconLayer(std::move(h), layer)
                                            : DecoderLayer(std::move(h), layer);
    out.push_back({fmt::format("layer {}", layer), h});
  }
  // The peak through the last layer: what `easyplan memory` calls activations (the logits block that
  // follows is its own figure).
  if (LiveMeter* meter = s_.meter()) meter->Mark();
  s_.comm().SetScope("final");
  DistTensor logits;
  if (m_.family == ModelFamily::kGpt2) {
    h = LayerNorm(std::move(h), "transformer/ln_f");
    logits = s_.Dot(std::move(h), P("transformer/wte/embedding"), DotDims{{}, {}, {2}, {1}}, "lm_head (tied wte)");
  } else if (m_.family == ModelFamily::kFalcon) {
    h = LayerNorm(std::move(h), "transformer/ln_f");
    logits = m_.tied_embeddings ? s_.Dot(std::move(h), P("transformer/word_embeddings/embedding"),
                                         DotDims{{}, {}, {2}, {1}}, "lm_head (tied)")
                                : s_.Dot(std::move(h), P("lm_head/kernel"), DotDims{{}, {}, {2}, {0}}, "lm_head");
  } else {
    h = RmsNorm(std::move(h), NormWeight("model/norm/kernel"), "model/norm");
    logits = m_.tied_embeddings
                 ? s_.Dot(std::move(h), P("model/embed_tokens/embedding"), DotDims{{}, {}, {2}, {1}}, "lm_head (tied)")
                 : s_.Dot(std::move(h), P("lm_head/kernel"), DotDims{{}, {}, {2}, {0}}, "lm_head");
  }
  // The loss constrains the logits with the train attributes batch_axis, sequence_axis and
  // hidden_state_axis (ForCausalLMLoss, easydel/infra/loss_utils.py), so the vocab dim lands where hidden
  // states live.
  out.push_back(
      {"logits", s_.Reshard(std::move(logits), hidden_spec_, "loss logits constraint"), Activation::Kind::kLogits});
  out.insert(out.end(), std::make_move_iterator(cache_.begin()), std::make_move_iterator(cache_.end()));
  return out;
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

// x [B, S, in] . W [in, out] (+ b).
DistTensor ForwardPass::Linear(DistTensor x, const std::string& prefix, bool bias, const DistSpec* user) {
  DistTensor y = s_.Dot(std::move(x), P(prefix + "/kernel"), DotDims{{}, {}, {2}, {0}}, prefix, {.user = user});
  if (bias) y = s_.Add(std::move(y), s_.Lift(P(prefix + "/bias"), 3), prefix + " bias");
  return y;
}

// GPT-2's Conv1D in EasyDeL layout: kernel [out, in], y = x . W^T + b.
DistTensor ForwardPass::Conv1D(DistTensor x, const std::string& prefix, const DistSpec* user) {
  DistTensor y = s_.Dot(std::move(x), P(prefix + "/kernel"), DotDims{{}, {}, {2}, {1}}, prefix, {.user = user});
  return s_.Add(std::move(y), s_.Lift(P(prefix + "/bias"), 3), prefix + " bias");
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

// An RMSNorm's scale: its weight, or 1 + weight for zero-centred norms (Qwen3NextRMSNorm).
DistTensor ForwardPass::NormWeight(const std::string& name) {
  if (!m_.zero_centered_norms) return P(name);
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
  y = s_.Mul(std::move(y), s_.Lift(P(prefix + "/scale"), 3), prefix + " scale");
  return s_.Add(std::move(y), s_.Lift(P(prefix + "/bias"), 3), prefix + " bias");
}

// Rotary embedding over the last dim of [B, S, H, D] at each token's global position: rotate-half
// (NeoX) on the first rotary_dim of D (all of it by default; GLM's partial_rotary_factor rotates a part
// and passes the rest, transformers modeling_glm4_moe.py apply_rotary_pos_emb), or on (even, odd) pairs
// (Llama 4's complex product, modeling_llama4.py apply_rotary_emb). Frequencies theta^(-2i / rotary_dim).
DistTensor ForwardPass::Rope(DistTensor x, const std::string& what) {
  const double theta = m_.rope_theta;
  const int64_t rotary = m_.rotary_dim;
  const bool interleaved = m_.rope_interleaved;
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
  return m_.layer_types[static_cast<size_t>(layer_)] == "chunked_attention" ? m_.attention_chunk : 0;
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
  scores = m_.attention_sinks ? SinkSoftmax(std::move(scores), scale, what)
                              : CausalSoftmax(std::move(scores), 2, 4, scale, what);
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

DistTensor ForwardPass::LlamaAttention(DistTensor x, const std::string& p) {
  const bool b = m_.attention_bias;
  DistTensor q = Heads(Linear(x, p + "/q_proj", b), m_.heads, p + "/q_proj");
  DistTensor gate;
  if (m_.attention_output_gate) {  // Qwen3NextAttention: per head [query, gate] (torch.chunk of head_dim * 2)
    q = s_.Split(std::move(q), 3, 2, p + " query / gate");                                     // [B, S, H, 2, D]
    gate = s_.Merge(s_.Squeeze(s_.Narrow(q, 3, 1, 1, p + " gate"), 3), 2, p + " gate heads");  // [B, S, H * D]
    q = s_.Squeeze(s_.Narrow(std::move(q), 3, 0, 1, p + " query"), 3);
  }
  DistTensor k = Heads(Linear(x, p + "/k_proj", b), m_.kv_heads, p + "/k_proj");
  DistTensor v = Heads(Linear(std::move(x), p + "/v_proj", b), m_.kv_heads, p + "/v_proj");
  if (m_.qk_norm) {
    q = RmsNorm(std::move(q), NormWeight(p + "/q_norm/kernel"), p + "/q_norm");
    k = RmsNorm(std::move(k), NormWeight(p + "/k_norm/kernel"), p + "/k_norm");
  }
  const bool rope =
      static_cast<size_t>(layer_) >= m_.nope_layers.size() || !m_.nope_layers[static_cast<size_t>(layer_)];
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
  if (m_.attention_output_gate) {
    gate = s_.Map(std::move(gate), [](double g) { return 1.0 / (1.0 + std::exp(-g)); });
    o = s_.Mul(std::move(o), std::move(gate), p + " output gate");
  }
  return Linear(std::move(o), p + "/o_proj", m_.o_bias, &hidden_spec_);
}

DistTensor ForwardPass::MlaAttention(DistTensor x, const std::string& p) {
  const int64_t nope = m_.qk_nope, rope = m_.qk_rope;
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
  DistTensor value = s_.Narrow(std::move(kv), 3, nope, m_.v_head, p + " value");
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

DistTensor ForwardPass::GatedMlp(DistTensor x, const std::string& p) {
  const bool b = m_.mlp_bias && p.find("experts") == std::string::npos;
  DistTensor gate = s_.Map(Linear(x, p + "/gate_proj", b), [](double v) { return v / (1.0 + std::exp(-v)); });
  DistTensor up = Linear(std::move(x), p + "/up_proj", b);
  return Linear(s_.Mul(std::move(gate), std::move(up), p + " silu(gate) * up"), p + "/down_proj", b, &hidden_spec_);
}

// Top-k routing weights [B, S, E] (zero for unselected experts).
DistTensor ForwardPass::Route(DistTensor x, const std::string& p) {
  DistTensor logits = s_.Dot(std::move(x), P(p + "/gate/kernel"), DotDims{{}, {}, {2}, {0}}, p + "/gate");
  DistTensor scores, choice;
  if (m_.family == ModelFamily::kDeepseek) {
    scores = s_.Map(std::move(logits), [](double v) { return 1.0 / (1.0 + std::exp(-v)); });
    choice = m_.correction_bias ? s_.Add(scores, s_.Lift(P(p + "/gate/e_score_correction_bias"), 3), p + " score bias")
                                : scores;
  } else {
    scores = s_.Softmax(std::move(logits), 2, p + " router");
    choice = scores;
  }
  const int64_t k = m_.top_k, groups = m_.n_group, keep_groups = m_.topk_group;
  DistTensor mask = s_.Local(
      std::move(choice), {2},
      [k, groups, keep_groups](HostTensor& t, const std::vector<Range>&) {
        const int64_t e = t.shape[2], per_group = e / groups;
        std::vector<int64_t> order(static_cast<size_t>(e));
        for (int64_t r = 0; r < t.size() / e; ++r) {
          double* v = t.data.data() + r * e;
          if (groups > 1) {  // group-limited: keep the topk_group groups by their top-2 sum
            std::vector<std::pair<double, int64_t>> group_score;
            for (int64_t g = 0; g < groups; ++g) {
              std::vector<double> members(v + g * per_group, v + (g + 1) * per_group);
              std::sort(members.rbegin(), members.rend());
              group_score.emplace_back(members[0] + (per_group > 1 ? members[1] : 0.0), -g);
            }
            std::sort(group_score.rbegin(), group_score.rend());
            for (int64_t i = keep_groups; i < groups; ++i) {
              const int64_t g = -group_score[static_cast<size_t>(i)].second;
              for (int64_t j = g * per_group; j < (g + 1) * per_group; ++j) v[j] = kMasked;
            }
          }
          TopKOrder(v, order);
          std::vector<double> picked(static_cast<size_t>(e), 0.0);
          for (int64_t i = 0; i < k; ++i) picked[static_cast<size_t>(order[static_cast<size_t>(i)])] = 1.0;
          std::copy(picked.begin(), picked.end(), v);
        }
      },
      p + " top-k");
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

// Every expert on every token, weighted by the routing weights (exactly the sparse sum, since
// unselected experts weigh zero): [B,S,H] x [E,H,I] -> [B,S,E,I]; [B,S,E,I] x [E,I,H] -> [E,B,S,H].
DistTensor ForwardPass::Experts(DistTensor x, const std::string& p) {
  const std::string e = p + "/experts/";
  const std::string w_gate = e + (m_.mixtral_names ? "w1" : "gate_proj") + "/kernel";
  const std::string w_up = e + (m_.mixtral_names ? "w3" : "up_proj") + "/kernel";
  const std::string w_down = e + (m_.mixtral_names ? "w2" : "down_proj") + "/kernel";
  DistTensor weights = Route(x, p);
  RoutedExperts experts;
  experts.kernel = w_gate;
  experts.outputs = [&](const DistTensor& tokens, const DistTensor&) {
    DistTensor gate = s_.Dot(tokens, ExpertKernel(w_gate, 2), DotDims{{}, {}, {2}, {1}}, w_gate);  // [B,S,E,I]
    gate = s_.Map(std::move(gate), [](double v) { return v / (1.0 + std::exp(-v)); });
    DistTensor up = s_.Dot(tokens, ExpertKernel(w_up, 2), DotDims{{}, {}, {2}, {1}}, w_up);
    DistTensor act = s_.Mul(std::move(gate), std::move(up), p + " experts silu(gate) * up");
    return s_.Dot(act, ExpertKernel(w_down, 1), DotDims{{2}, {0}, {3}, {1}}, w_down);  // [E, B, S, H]
  };
  return FusedMoe(std::move(x), std::move(weights), experts, p);
}

DistTensor ForwardPass::Mlp(DistTensor x, int64_t layer, const std::string& base) {
  if (m_.family == ModelFamily::kGptOss) return GptOssMoe(std::move(x), base + "/mlp");
  if (m_.family == ModelFamily::kQwen3Next) {
    const bool sparse =
        static_cast<size_t>(layer) < m_.sparse_layers.size() && m_.sparse_layers[static_cast<size_t>(layer)];
    return sparse ? Qwen3NextMoe(std::move(x), base + "/mlp") : GatedMlp(std::move(x), base + "/mlp");
  }
  if (m_.family == ModelFamily::kLlama4) {
    const bool sparse =
        static_cast<size_t>(layer) < m_.sparse_layers.size() && m_.sparse_layers[static_cast<size_t>(layer)];
    return sparse ? Llama4Moe(std::move(x), base + "/feed_forward") : GatedMlp(std::move(x), base + "/feed_forward");
  }
  const bool moe =
      (m_.family == ModelFamily::kMoe || m_.family == ModelFamily::kDeepseek) && layer >= m_.first_dense_layers;
  if (!moe) return GatedMlp(std::move(x), base + "/mlp");
  const std::string p = base + (m_.mixtral_names ? "/block_sparse_moe" : "/mlp");
  if (m_.shared_intermediate > 0) {
    DistTensor shared = GatedMlp(x, p + "/shared_experts");
    return s_.Add(Experts(std::move(x), p), std::move(shared), p + " routed + shared");
  }
  return Experts(std::move(x), p);
}

DistTensor ForwardPass::DecoderLayer(DistTensor h, int64_t layer) {
  const std::string base = fmt::format("model/layers/{}", layer);
  DistTensor x = RmsNorm(h, NormWeight(base + "/input_layernorm/kernel"), base + "/input_layernorm");
  const bool linear = static_cast<size_t>(layer) < m_.layer_types.size() &&
                      m_.layer_types[static_cast<size_t>(layer)] == "linear_attention";
  DistTensor a = m_.family == ModelFamily::kDeepseek && m_.kv_lora_rank > 0
                     ? MlaAttention(std::move(x), base + "/self_attn")
                 : linear && m_.family == ModelFamily::kQwen3Next ? GatedDeltaNet(std::move(x), base + "/linear_attn")
                                                                  : LlamaAttention(std::move(x), base + "/self_attn");
  h = s_.Add(std::move(h), s_.Reshard(std::move(a), hidden_spec_, "attention output constraint"), "residual");
  x = RmsNorm(h, NormWeight(base + "/post_attention_layernorm/kernel"), base + "/post_attention_layernorm");
  DistTensor f = Mlp(std::move(x), layer, base);
  h = s_.Add(std::move(h), s_.Reshard(std::move(f), hidden_spec_, "mlp output constraint"), "residual");
  return s_.Reshard(std::move(h), hidden_spec_, "hidden-state constraint");
}

DistTensor ForwardPass::Gpt2Layer(DistTensor h, int64_t layer) {
  const std::string p = fmt::format("transformer/h/{}", layer);
  DistTensor x = LayerNorm(h, p + "/ln_1");
  DistTensor qkv = Conv1D(std::move(x), p + "/attn/c_attn");  // [B, S, 3H]
  qkv = s_.Split(std::move(qkv), 2, 3, p + " fused qkv");     // [B, S, 3, H]
  auto part = [&](int64_t i) {
    DistTensor t = s_.Squeeze(s_.Narrow(qkv, 2, i, 1, p + " split qkv"), 2);
    return Heads(std::move(t), m_.heads, p + " qkv");
  };
  DistTensor q = part(0), k = part(1), v = part(2);
  StoreCache(k, v);
  DistTensor o = Attend(std::move(q), std::move(k), std::move(v), p + "/attn");
  o = Conv1D(std::move(o), p + "/attn/c_proj", &hidden_spec_);
  h = s_.Add(std::move(h), s_.Reshard(std::move(o), hidden_spec_, "attention output constraint"), "residual");
  x = LayerNorm(h, p + "/ln_2");
  DistTensor f = Conv1D(std::move(x), p + "/mlp/c_fc");
  f = s_.Map(std::move(f), [](double z) {  // gelu_new
    return 0.5 * z * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (z + 0.044715 * z * z * z)));
  });
  f = Conv1D(std::move(f), p + "/mlp/c_proj", &hidden_spec_);
  h = s_.Add(std::move(h), s_.Reshard(std::move(f), hidden_spec_, "mlp output constraint"), "residual");
  return s_.Reshard(std::move(h), hidden_spec_, "hidden-state constraint");
}

}  // namespace easyplan::kernels::internal
