// Mechanisms of gpt-oss (transformers src/transformers/models/gpt_oss/modeling_gpt_oss.py) in the reference
// forward pass: attention sinks (the structure's attention.sinks), the top_k_softmax router (logits, biased
// when the tree has the bias, softmax over the top k) and the interleaved_clamped_glu experts (stacked gate_up with
// biases, the clamped GLU).

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
  return s_.Local(
      Linear(x, p + "/" + m_.forward.moe.router, m_.router_bias), {2},
      [k](HostTensor& t, const std::vector<Range>&) {
        const int64_t e = t.shape[2];
        std::vector<int64_t> order(static_cast<size_t>(e));
        for (int64_t r = 0; r < t.size() / e; ++r) {
          double* v = t.data.data() + r * e;
          TopKOrder(v, order);
          const double top = v[order[0]];
          std::vector<double> w(static_cast<size_t>(e), 0.0);
          double z = 0.0;
          for (int64_t i = 0; i < k; ++i) {
            const auto j = static_cast<size_t>(order[static_cast<size_t>(i)]);
            w[j] = std::exp(v[j] - top);
            z += w[j];
          }
          for (int64_t j = 0; j < e; ++j) v[j] = w[static_cast<size_t>(j)] / z;
        }
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

}  // namespace easyplan::kernels::internal
