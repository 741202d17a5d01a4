// The Gated DeltaNet of Qwen3-Next (transformers src/transformers/models/qwen3_next/modeling_qwen3_next.py)
// in the reference forward pass: the token mixer of 'linear_attention' layers (the structure's
// attention.linear). The gated full attention is the grouped-query attention's output_gate, the zero-centred
// RMSNorms NormWeight's, the gated shared expert MoeBlock's.

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/forward_pass.h"

namespace easyplan::kernels::internal {

namespace {

double Sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

}  // namespace

// Depthwise causal conv1d over the sequence with SiLU (Qwen3NextGatedDeltaNet: F.silu(conv1d(x)[..., :seq]),
// no bias): y[t, c] = silu(sum_j w[j, c] x[t - (K - 1) + j, c]) for x [B, S, C] and EasyDeL's kernel
// [K, 1, C]. The kernel rides along the sequence dim (rows S .. S + K - 1) so one op sees both.
DistTensor ForwardPass::CausalConv(DistTensor x, const std::string& weight, const std::string& what) {
  const int64_t seq = x.shape[1], batch = x.shape[0];
  DistTensor w = s_.Squeeze(P(weight), 1);                                              // [K, C]
  w = s_.Broadcast(s_.Unsqueeze(std::move(w), 0), 0, batch);                            // [B, K, C]
  DistTensor xw = s_.Concat(std::move(x), std::move(w), 1, what + " inputs + kernel");  // [B, S + K, C]
  xw = s_.Local(
      std::move(xw), {1},
      [seq](HostTensor& t, const std::vector<Range>&) {
        const int64_t rows = t.shape[1], channels = t.shape[2], k = rows - seq;
        std::vector<double> out(static_cast<size_t>(seq * channels));
        for (int64_t b = 0; b < t.shape[0]; ++b) {
          const double* base = t.data.data() + b * rows * channels;
          for (int64_t s = 0; s < seq; ++s) {
            for (int64_t c = 0; c < channels; ++c) {
              double sum = 0.0;
              for (int64_t j = 0; j < k; ++j) {
                const int64_t src = s - (k - 1) + j;
                if (src >= 0) sum += base[(seq + j) * channels + c] * base[src * channels + c];
              }
              out[static_cast<size_t>(s * channels + c)] = sum * Sigmoid(sum);
            }
          }
          std::copy(out.begin(), out.end(), t.data.data() + b * rows * channels);
        }
      },
      what + " causal conv1d");
  return s_.Narrow(std::move(xw), 1, 0, seq, what + " conv output");
}

// Qwen3NextGatedDeltaNet: in_proj_qkvz laid out per key head (q, k, v, z of a group together) and
// in_proj_ba (b, a per group), fix_query_key_value_ordering; the causal conv over cat(q, k, v); q and k
// repeated to the value heads; beta = sigmoid(b), g = -exp(A_log) softplus(a + dt_bias); the gated delta
// rule with q and k L2-normalised (torch_recurrent_gated_delta_rule, which the chunked kernel equals):
// S = S exp(g); S += k (beta (v - k.S)); o = (q / sqrt(dk)).S; then the gated RMSNorm
// (norm(o) weight silu(z)) and out_proj.
DistTensor ForwardPass::GatedDeltaNet(DistTensor x, const std::string& p) {
  const int64_t nk = m_.linear_key_heads, nv = m_.linear_value_heads, dk = m_.linear_key_dim, dv = m_.linear_value_dim,
                r = nv / nk;
  DistTensor qkvz = s_.Split(Linear(x, p + "/in_proj_qkvz"), 2, nk, p + " key-head groups");   // [B,S,nk,2dk+2r dv]
  DistTensor ba = s_.Split(Linear(std::move(x), p + "/in_proj_ba"), 2, nk, p + " ba groups");  // [B, S, nk, 2r]
  auto flat = [&](DistTensor t) { return s_.Merge(std::move(t), 2, p + " flatten heads"); };
  DistTensor q = flat(s_.Narrow(qkvz, 3, 0, dk, p + " q"));           // [B, S, nk dk]
  DistTensor k = flat(s_.Narrow(qkvz, 3, dk, dk, p + " k"));          // [B, S, nk dk]
  DistTensor v = flat(s_.Narrow(qkvz, 3, 2 * dk, r * dv, p + " v"));  // [B, S, nv dv]
  DistTensor z = s_.Split(flat(s_.Narrow(std::move(qkvz), 3, 2 * dk + r * dv, r * dv, p + " z")), 2, nv,
                          p + " z heads");                           // [B, S, nv, dv]
  DistTensor b = flat(s_.Narrow(ba, 3, 0, r, p + " b"));             // [B, S, nv]
  DistTensor a = flat(s_.Narrow(std::move(ba), 3, r, r, p + " a"));  // [B, S, nv]

  DistTensor mixed = s_.Concat(s_.Concat(std::move(q), std::move(k), 2, p + " q, k"), std::move(v), 2, p + " q, k, v");
  const bool cache = m_.cache_axes.has_value();
  DistTensor conv_state;  // the last `kernel` inputs of the conv, [B, channels, kernel]
  if (cache) {
    const int64_t kernel = P(p + "/conv1d/kernel").shape[0], seq = mixed.shape[1];
    if (kernel <= seq) {
      conv_state = s_.Transpose(s_.Narrow(mixed, 1, seq - kernel, kernel, p + " conv state"), {0, 2, 1});
    }
  }
  mixed = CausalConv(std::move(mixed), p + "/conv1d/kernel", p);
  auto split_heads = [&](DistTensor t, int64_t n, const std::string& what) {
    return s_.Split(std::move(t), 2, n, p + " " + what + " heads");
  };
  q = split_heads(s_.Narrow(mixed, 2, 0, nk * dk, p + " conv q"), nk, "q");                       // [B, S, nk, dk]
  k = split_heads(s_.Narrow(mixed, 2, nk * dk, nk * dk, p + " conv k"), nk, "k");                 // [B, S, nk, dk]
  v = split_heads(s_.Narrow(std::move(mixed), 2, 2 * nk * dk, nv * dv, p + " conv v"), nv, "v");  // [B, S, nv, dv]
  // repeat_interleave(nv / nk, dim=2): value head h reads key head h / r.
  auto repeat = [&](DistTensor t, const std::string& what) {
    t = s_.Broadcast(s_.Unsqueeze(std::move(t), 3), 3, r);  // [B, S, nk, r, dk]
    return s_.Merge(std::move(t), 2, p + " " + what + " repeated to the value heads");
  };
  // l2norm(x, eps=1e-6): x / sqrt(sum x^2 + eps); the query also scaled by 1 / sqrt(dk).
  auto l2 = [&](DistTensor t, double scale, const std::string& what) {
    DistTensor ss = s_.Reduce(s_.Map(t, [](double e) { return e * e; }), 3, ReduceOp::kSum, p + " " + what + " l2");
    return s_.Binary(
        std::move(t), std::move(ss), [scale](double e, double n) { return scale * e / std::sqrt(n + 1e-6); },
        p + " " + what + " l2 norm");
  };
  q = l2(repeat(std::move(q), "q"), 1.0 / std::sqrt(static_cast<double>(dk)), "q");
  k = l2(repeat(std::move(k), "k"), 1.0, "k");
  DistTensor beta = s_.Map(std::move(b), Sigmoid);
  DistTensor g = s_.Add(std::move(a), s_.Lift(P(p + "/dt_bias"), 3), p + " a + dt_bias");
  g = s_.Binary(
      std::move(g), s_.Lift(P(p + "/A_log"), 3),
      [](double u, double a_log) { return -std::exp(a_log) * (u > 30.0 ? u : std::log1p(std::exp(u))); },
      p + " g");  // [B, S, nv]

  // The recurrence runs along the sequence per (batch, value head): q, k, v, g and beta side by side.
  DistTensor packed = s_.Concat(std::move(q), std::move(k), 3, p + " pack q, k");
  packed = s_.Concat(std::move(packed), std::move(v), 3, p + " pack v");
  packed = s_.Concat(std::move(packed), s_.Unsqueeze(std::move(g), 3), 3, p + " pack g");
  packed = s_.Concat(std::move(packed), s_.Unsqueeze(std::move(beta), 3), 3, p + " pack beta");  // [B,S,nv,W]
  // With a cache, a slot for each step's delta: the final state is sum_t G_t k_t (x) delta_t, G_t the decay
  // after step t (written over g).
  if (cache)
    packed = s_.Concat(std::move(packed), s_.Narrow(packed, 3, 2 * dk, dv, p + " delta slot"), 3, p + " pack delta");
  packed = s_.Local(
      std::move(packed), {1, 3},
      [dk, dv](HostTensor& t, const std::vector<Range>&) {
        const int64_t seq = t.shape[1], heads = t.shape[2], width = t.shape[3];
        std::vector<double> state(static_cast<size_t>(dk * dv)), delta(static_cast<size_t>(dv));
        for (int64_t bi = 0; bi < t.shape[0]; ++bi) {
          for (int64_t h = 0; h < heads; ++h) {
            std::fill(state.begin(), state.end(), 0.0);
            for (int64_t s = 0; s < seq; ++s) {
              double* row = t.data.data() + ((bi * seq + s) * heads + h) * width;
              const double* qt = row;
              const double* kt = row + dk;
              double* vt = row + 2 * dk;  // overwritten with the output
              const double decay = std::exp(row[2 * dk + dv]), beta_t = row[2 * dk + dv + 1];
              for (double& e : state) e *= decay;
              for (int64_t j = 0; j < dv; ++j) {
                double mem = 0.0;
                for (int64_t i = 0; i < dk; ++i) mem += state[static_cast<size_t>(i * dv + j)] * kt[i];
                delta[static_cast<size_t>(j)] = (vt[j] - mem) * beta_t;
              }
              for (int64_t i = 0; i < dk; ++i) {
                for (int64_t j = 0; j < dv; ++j)
                  state[static_cast<size_t>(i * dv + j)] += kt[i] * delta[static_cast<size_t>(j)];
              }
              for (int64_t j = 0; j < dv; ++j) {
                double o = 0.0;
                for (int64_t i = 0; i < dk; ++i) o += state[static_cast<size_t>(i * dv + j)] * qt[i];
                vt[j] = o;
              }
              if (width > 2 * dk + dv + 2) std::copy(delta.begin(), delta.end(), row + 2 * dk + dv + 2);
            }
            if (width > 2 * dk + dv + 2) {  // G_t = exp(sum of g after t)
              double after = 0.0;
              for (int64_t s = seq - 1; s >= 0; --s) {
                double* g_slot = t.data.data() + ((bi * seq + s) * heads + h) * width + 2 * dk + dv;
                const double g_t = *g_slot;
                *g_slot = std::exp(after);
                after += g_t;
              }
            }
          }
        }
      },
      p + " gated delta rule");
  if (cache && conv_state.rank() > 0) {
    DistTensor decayed_k = s_.Mul(s_.Narrow(packed, 3, dk, dk, p + " k"),
                                  s_.Narrow(packed, 3, 2 * dk + dv, 1, p + " G"), p + " decayed k");
    DistTensor state = s_.Dot(std::move(decayed_k), s_.Narrow(packed, 3, 2 * dk + dv + 2, dv, p + " delta"),
                              DotDims{{0, 2}, {0, 2}, {1}, {1}}, p + " final state");  // [B, nv, dk, dv]
    StoreLinearState(std::move(conv_state), std::move(state));
  }
  DistTensor o = s_.Narrow(std::move(packed), 3, 2 * dk, dv, p + " core output");  // [B, S, nv, dv]
  // Qwen3NextRMSNormGated: weight * rmsnorm(o) * silu(z) (a plain weight, not zero-centred).
  o = RmsNorm(std::move(o), P(p + "/norm/kernel"), p + "/norm");
  z = s_.Map(std::move(z), [](double e) { return e * Sigmoid(e); });
  o = s_.Mul(std::move(o), std::move(z), p + " norm gate");
  return Linear(s_.Merge(std::move(o), 2, p + " heads"), p + "/out_proj");
}

}  // namespace easyplan::kernels::internal
