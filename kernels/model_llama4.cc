// Llama 4 text layers of the reference forward pass (transformers src/transformers/models/llama4/modeling_llama4.py):
// the MoE block. Chunked attention, NoPE layers and the L2 q/k norm are LlamaAttention's flags
// (ModelDesc::layer_types, nope_layers, l2_qk_norm).

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/forward_pass.h"

namespace easyplan::kernels::internal {

// Llama4TextMoe: Llama4Router (logits = x W^T, no bias; top-k; score = sigmoid(chosen logit), 0 for the
// others), every expert's INPUT scaled by its score (routed_in = x * router_scores), Llama4TextExperts
// (gate_up = x @ gate_up_proj [E, H, 2I]; gate, up = gate_up.chunk(2, -1); (up * silu(gate)) @ down_proj
// [E, I, H]) summed over the selected experts (EasyDeL's fused MoE path, FusedMoe), plus the shared SwiGLU
// expert.
DistTensor ForwardPass::Llama4Moe(DistTensor x, const std::string& p) {
  const int64_t k = m_.top_k;
  DistTensor logits = s_.Dot(x, P(p + "/router/kernel"), DotDims{{}, {}, {2}, {0}}, p + "/router");  // [B, S, E]
  DistTensor scores = s_.Local(
      std::move(logits), {2},
      [k](HostTensor& t, const std::vector<Range>&) {
        const int64_t e = t.shape[2];
        std::vector<int64_t> order(static_cast<size_t>(e));
        for (int64_t r = 0; r < t.size() / e; ++r) {
          double* v = t.data.data() + r * e;
          TopKOrder(v, order);
          std::vector<double> w(static_cast<size_t>(e), 0.0);
          for (int64_t i = 0; i < k; ++i) {
            const auto j = static_cast<size_t>(order[static_cast<size_t>(i)]);
            w[j] = 1.0 / (1.0 + std::exp(-v[j]));
          }
          std::copy(w.begin(), w.end(), v);
        }
      },
      p + " router top-k sigmoid");
  DistTensor shared = GatedMlp(x, p + "/shared_expert");
  const std::string e = p + "/experts/";
  RoutedExperts experts;
  experts.kernel = e + "gate_up_proj";
  experts.weighted_outputs = false;  // the scores scaled the inputs
  experts.outputs = [&](const DistTensor& tokens, const DistTensor& local_scores) {
    DistTensor routed_in = s_.Mul(s_.Unsqueeze(local_scores, 3), s_.Unsqueeze(tokens, 2),
                                  p + " expert inputs scaled by the scores");  // [B, S, E, H]
    DistTensor gate_up = s_.Dot(std::move(routed_in), ExpertKernel(e + "gate_up_proj", 2), DotDims{{2}, {0}, {3}, {1}},
                                e + "gate_up_proj");
    gate_up = s_.Split(std::move(gate_up), 3, 2, p + " gate / up halves");  // [E, B, S, 2, I]
    DistTensor gate = s_.Squeeze(s_.Narrow(gate_up, 3, 0, 1, p + " gate"), 3);
    DistTensor up = s_.Squeeze(s_.Narrow(std::move(gate_up), 3, 1, 1, p + " up"), 3);
    gate = s_.Map(std::move(gate), [](double v) { return v / (1.0 + std::exp(-v)); });
    DistTensor act = s_.Mul(std::move(gate), std::move(up), p + " experts silu(gate) * up");             // [E, B, S, I]
    return s_.Dot(act, ExpertKernel(e + "down_proj", 1), DotDims{{0}, {0}, {3}, {1}}, e + "down_proj");  // [E,B,S,H]
  };
  DistTensor routed = FusedMoe(std::move(x), std::move(scores), experts, p);
  return s_.Add(std::move(shared), std::move(routed), p + " shared + routed");
}

}  // namespace easyplan::kernels::internal
