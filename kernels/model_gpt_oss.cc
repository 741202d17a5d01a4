// gpt_oss layers of the reference forward pass (transformers src/transformers/models/gpt_oss/modeling_gpt_oss.py):
// attention sinks, and the MoE block (biased router, top-k softmax, stacked experts with biases and the
// clamped SwiGLU). The attention itself is LlamaAttention (q/k/v/o biases) with the layer's sliding window.

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
  const std::string name = fmt::format("model/layers/{}/self_attn/sinks", layer_);
  DistTensor sink = s_.Split(P(name), 0, scores.shape[1], what + " sinks per kv head");  // [Hkv, G]
  sink = s_.Unsqueeze(s_.Unsqueeze(s_.Unsqueeze(std::move(sink), 1), 3), 0);             // [1, Hkv, 1, G, 1]
  sink = s_.Broadcast(s_.Broadcast(std::move(sink), 0, scores.shape[0]), 2, scores.shape[2]);
  DistTensor combined = s_.Concat(std::move(scores), std::move(sink), 4, what + " logits + sink");
  DistTensor probs = s_.Softmax(std::move(combined), 4, what + " softmax with sink");
  return s_.Narrow(std::move(probs), 4, 0, keys, what + " drop the sink");
}

// GptOssMLP: GptOssTopKRouter (logits = x W^T + b; top-k; softmax over the k chosen values), then
// GptOssExperts through EasyDeL's fused MoE path (FusedMoe), weighted by the routing scores:
// gate_up = x @ gate_up_proj [E, H, 2I] + gate_up_proj_bias; gate = [..., ::2], up = [..., 1::2];
// gate clamped above at limit, up to [-limit, limit]; out = ((up + 1) * gate * sigmoid(1.702 gate)) @ down_proj
// [E, I, H] + down_proj_bias.
DistTensor ForwardPass::GptOssMoe(DistTensor x, const std::string& p) {
  const int64_t k = m_.top_k;
  DistTensor weights = s_.Local(
      Linear(x, p + "/router", /*bias=*/true), {2},
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
  const std::string e = p + "/experts/";
  RoutedExperts experts;
  experts.kernel = e + "gate_up_proj";
  experts.down_bias = e + "down_proj_bias";
  experts.outputs = [&](const DistTensor& tokens, const DistTensor&) {
    DistTensor gate_up =
        s_.Dot(tokens, ExpertKernel(e + "gate_up_proj", 2), DotDims{{}, {}, {2}, {1}}, e + "gate_up_proj");
    DistTensor bias = s_.Lift(ExpertKernel(e + "gate_up_proj_bias", 1), 4);
    gate_up = s_.Add(std::move(gate_up), std::move(bias), e + "gate_up_proj bias");  // [B,S,E,2I]
    const int64_t width = gate_up.shape[3] / 2;  // read before the move: argument order is unspecified
    gate_up = s_.Split(std::move(gate_up), 3, width, p + " interleaved gate / up");  // [B,S,E,I,2]
    DistTensor gate = s_.Squeeze(s_.Narrow(gate_up, 4, 0, 1, p + " gate"), 4);
    DistTensor up = s_.Squeeze(s_.Narrow(std::move(gate_up), 4, 1, 1, p + " up"), 4);
    const double limit = m_.swiglu_limit;
    gate = s_.Map(std::move(gate), [limit](double g) {
      g = std::min(g, limit);
      return g / (1.0 + std::exp(-1.702 * g));
    });
    up = s_.Map(std::move(up), [limit](double u) { return std::clamp(u, -limit, limit) + 1.0; });
    DistTensor act = s_.Mul(std::move(gate), std::move(up), p + " experts (up + 1) * glu");
    return s_.Dot(act, ExpertKernel(e + "down_proj", 1), DotDims{{2}, {0}, {3}, {1}}, e + "down_proj");  // [E,B,S,H]
  };
  return FusedMoe(std::move(x), std::move(weights), experts, p);
}

}  // namespace easyplan::kernels::internal
