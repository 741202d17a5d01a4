// Mechanisms of gpt-oss (transformers src/transformers/models/gpt_oss/modeling_gpt_oss.py) in the reference
// forward pass: attention sinks (the structure's attention.sinks), the top_k_softmax router (logits, biased
// when the tree has the bias, softmax over the top k) and the interleaved_clamped_glu experts (stacked gate_up with
// biases, the clamped GLU), run by the fused MoE path or, as EasyDeL c14e25c9 runs them, gathered per token.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/forward_pass.h"

namespace easyplan::kernels::internal {

// eager_attention_forward: the per-head sink is an extra logit column of the softmax, dropped after
// (combined_logits = cat([attn_weights, sinks], -1); probs = softmax(combined_logits)[..., :-1]).
// scores [B, Hkv, S, G, T]; self_attn/sinks [heads] (head = kv head x G + group).
DistTensor ForwardPass::SinkSoftmax(DistTensor scores, double scale, const std::string& what) {
  const int64_t keys = scores.shape[4];
  scores = MaskScores(std::move(scores), 2, 4, scale);
  const std::string name = fmt::format("{}/{}/{}", m_.forward.layers, layer_, m_.forward.attention.sinks);
  DistTensor sink = s_.Split(P(name), 0, scores.shape[1], what + " sinks per kv head");  // [Hkv, G]
  sink = s_.Unsqueeze(s_.Unsqueeze(s_.Unsqueeze(std::move(sink), 1), 3), 0);             // [1, Hkv, 1, G, 1]
  sink = s_.Broadcast(s_.Broadcast(std::move(sink), 0, scores.shape[0]), 2, scores.shape[2]);
  DistTensor combined = s_.Concat(std::move(scores), std::move(sink), 4, what + " logits + sink");
  DistTensor probs = s_.Softmax(std::move(combined), 4, what + " softmax with sink");
  return s_.Narrow(std::move(probs), 4, 0, keys, what + " drop the sink");
}

// GptOssTopKRouter: logits = x W^T + b; top-k; softmax over the k chosen values. GraniteMoeTopKGating
// (transformers modeling_granitemoe.py) is the same without the bias: the bias is used when the tree has it.
DistTensor ForwardPass::TopKSoftmaxRouter(const DistTensor& x, const std::string& p) {
  const int64_t k = m_.top_k;
  return RankRows(
      s_, Linear(x, p + "/" + m_.forward.moe.router, m_.router_bias),
      [k](double* v, const std::vector<int64_t>& order) {
        const double top = v[order[0]];
        std::vector<double> w(order.size(), 0.0);
        double z = 0.0;
        for (int64_t i = 0; i < k; ++i) {
          const auto j = static_cast<size_t>(order[static_cast<size_t>(i)]);
          w[j] = std::exp(v[j] - top);
          z += w[j];
        }
        for (size_t j = 0; j < w.size(); ++j) v[j] = w[j] / z;
      },
      p + " router top-k softmax");
}

// GptOssExperts, weighted by the routing scores: gate_up = x @ gate_up_proj [E, H, 2I] + gate_up_proj_bias;
// gate = [..., ::2], up = [..., 1::2]; gate clamped above at limit, up to [-limit, limit];
// out = ((up + 1) * gate * sigmoid(1.702 gate)) @ down_proj [E, I, H] + down_proj_bias.
ForwardPass::RoutedExperts ForwardPass::InterleavedClampedGluExperts(const std::string& p) {
  const std::string gate_up = p + "/" + m_.forward.moe.gate_up, down = p + "/" + m_.forward.moe.down;
  RoutedExperts experts;
  experts.kernel = gate_up;
  experts.down_bias = down + "_bias";
  experts.outputs = [this, p, gate_up, down](const DistTensor& tokens, const DistTensor&) {
    DistTensor y = s_.Dot(tokens, ExpertKernel(gate_up, 2), DotDims{{}, {}, {2}, {1}}, gate_up);
    DistTensor bias = s_.Lift(ExpertKernel(gate_up + "_bias", 1), 4);
    y = s_.Add(std::move(y), std::move(bias), gate_up + " bias");  // [B,S,E,2I]
    const int64_t width = y.shape[3] / 2;  // read before the move: argument order is unspecified
    y = s_.Split(std::move(y), 3, width, p + " interleaved gate / up");  // [B,S,E,I,2]
    DistTensor gate = s_.Squeeze(s_.Narrow(y, 4, 0, 1, p + " gate"), 4);
    DistTensor up = s_.Squeeze(s_.Narrow(std::move(y), 4, 1, 1, p + " up"), 4);
    DistTensor act = ClampedGlu(std::move(gate), std::move(up), p);
    return s_.Dot(act, ExpertKernel(down, 1), DotDims{{2}, {0}, {3}, {1}}, down);  // [E,B,S,H]
  };
  return experts;
}

// gpt-oss's activation: gate clamped above at the limit, up to [-limit, limit];
// (up + 1) * gate * sigmoid(1.702 gate).
DistTensor ForwardPass::ClampedGlu(DistTensor gate, DistTensor up, const std::string& p) {
  const double limit = m_.swiglu_limit;
  gate = s_.Map(std::move(gate), [limit](double g) {
    g = std::min(g, limit);
    return g / (1.0 + std::exp(-1.702 * g));
  });
  up = s_.Map(std::move(up), [limit](double u) { return std::clamp(u, -limit, limit) + 1.0; });
  return s_.Mul(std::move(gate), std::move(up), p + " experts (up + 1) * glu");
}

// EasyDeL 090a03b2's gpt-oss experts (easydel/modules/gpt_oss/modeling_gpt_oss.py:169-193): three
// ParallelMoELinear modules with biases, gate [E, H, I], up [E, H, I], down [E, I, H]; its loader takes gate
// from the checkpoint's gate_up_proj[..., 0::2] and up from [..., 1::2] (:111-138), so the values are those
// of the interleaved experts.
ForwardPass::RoutedExperts ForwardPass::SplitClampedGluExperts(const std::string& p) {
  const schemas::ForwardStructure::Moe& moe = m_.forward.moe;
  const std::string w_gate = ExpertParam(p, moe.gate), w_up = ExpertParam(p, moe.up), w_down = ExpertParam(p, moe.down);
  const std::string gate_bias = p + "/" + moe.gate + "/bias", up_bias = p + "/" + moe.up + "/bias";
  RoutedExperts experts;
  experts.kernel = w_gate;
  experts.down_bias = p + "/" + moe.down + "/bias";
  experts.outputs = [this, p, w_gate, w_up, w_down, gate_bias, up_bias](const DistTensor& tokens, const DistTensor&) {
    auto biased = [&](const std::string& kernel, const std::string& bias) {
      DistTensor y = s_.Dot(tokens, ExpertKernel(kernel, 2), DotDims{{}, {}, {2}, {1}}, kernel);  // [B,S,E,I]
      return s_.Add(std::move(y), s_.Lift(ExpertKernel(bias, 1), 4), bias);
    };
    DistTensor act = ClampedGlu(biased(w_gate, gate_bias), biased(w_up, up_bias), p);
    return s_.Dot(act, ExpertKernel(w_down, 1), DotDims{{2}, {0}, {3}, {1}}, w_down);  // [E,B,S,H]
  };
  return experts;
}

// GptOssExperts at EasyDeL c14e25c9 (easydel/modules/gpt_oss/modeling_gpt_oss.py:108-133), plain JAX under
// jit, no shard_map: for the tokens x [T, H] and each token's k chosen experts (GptOssTopKRouter's top_k indices)
//   gate_up = einsum("td,txdf->txf", x, take(gate_up_proj, idx, axis=0)) + take(gate_up_proj_bias, idx)
//   fused = (clip(up) + 1) * glu(gate)                       (gate = [..., ::2], up = [..., 1::2])
//   y = einsum("txf,txfd->txd", fused, take(down_proj, idx)) + take(down_proj_bias, idx)
//   out = einsum("txd,tx->td", y, take_along_axis(routing_weights, idx))
// Each take is a gather whose operand is sharded on the indexed (expert) dim. XLA's gather partitioner
// (xla/service/spmd/gather_scatter_handler.cc, PartitionGather) tries its methods in order of the memory they
// need: keeping the operand's passthrough dims sharded (tp on the expert width) costs least, then, inside each
// tp group, partitioning by the indices' token dims with the operand replicated on its expert dim needs less
// than a masked local gather with a replicated [T, k, in, out] result whenever T x k exceeds the experts held.
// So each kernel's expert dim is all-gathered, and each device takes its own tokens' experts
// [T/shards, k, in, out/tp]: the whole operand of a matmul that a token-choice MoE otherwise never builds.
// x [B, S, H], weights [B, S, E] (zero for unchosen experts) -> [B, S, H].
DistTensor ForwardPass::PerTokenGatherExperts(const DistTensor& x, const DistTensor& weights, const std::string& p) {
  const schemas::ForwardStructure::Moe& moe = m_.forward.moe;
  const int64_t k = m_.top_k;
  // The router's top_k, in order: the chosen experts' indices and their weights, [B, S, k].
  auto chosen = [&](bool indices, const std::string& what) {
    DistTensor t = RankRows(
        s_, weights,
        [k, indices](double* v, const std::vector<int64_t>& order) {
          std::vector<double> top(static_cast<size_t>(k));
          for (int64_t i = 0; i < k; ++i) {
            const int64_t j = order[static_cast<size_t>(i)];
            top[static_cast<size_t>(i)] = indices ? static_cast<double>(j) : v[j];
          }
          std::copy(top.begin(), top.end(), v);
        },
        what);
    return s_.Narrow(std::move(t), 2, 0, k, what);
  };
  const DistTensor idx = chosen(true, p + " router top-k indices");
  const DistTensor chosen_weights = chosen(false, p + " take_along_axis(routing_weights, indices)");
  auto take = [&](const std::string& name) {
    const DistTensor& stored = P(name);
    DistSpec every_expert = stored.spec;
    every_expert.dims[0].clear();
    DistTensor all = s_.Reshard(stored, every_expert, name + " (every expert, for the per-token take)");
    all.parameter = true;
    s_.Untrack(all);
    return s_.Embed(std::move(all), idx, name + " take(., indices)");  // [B, S, k, ...]
  };
  const std::string gate_up = p + "/" + moe.gate_up, down = p + "/" + moe.down;
  DistTensor y = s_.Dot(x, take(gate_up), DotDims{{0, 1}, {0, 1}, {2}, {3}}, gate_up);  // [B,S,k,2I]
  y = s_.Add(std::move(y), take(gate_up + "_bias"), gate_up + " bias");
  const int64_t width = y.shape[3] / 2;
  y = s_.Split(std::move(y), 3, width, p + " interleaved gate / up");  // [B,S,k,I,2]
  DistTensor gate = s_.Squeeze(s_.Narrow(y, 4, 0, 1, p + " gate"), 4);
  DistTensor up = s_.Squeeze(s_.Narrow(std::move(y), 4, 1, 1, p + " up"), 4);
  DistTensor act = ClampedGlu(std::move(gate), std::move(up), p);                           // [B,S,k,I]
  DistTensor out = s_.Dot(act, take(down), DotDims{{0, 1, 2}, {0, 1, 2}, {3}, {3}}, down);  // [B,S,k,H]
  out = s_.Add(std::move(out), take(down + "_bias"), down + " bias");
  return s_.Dot(out, chosen_weights, DotDims{{0, 1}, {0, 1}, {2}, {2}}, p + " weighted sum of the k experts");
}

}  // namespace easyplan::kernels::internal
