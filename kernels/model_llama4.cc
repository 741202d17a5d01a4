// Mechanisms of Llama 4 (transformers src/transformers/models/llama4/modeling_llama4.py) in the reference
// forward pass: the top_k_sigmoid_input router and the fused_halves_silu experts whose inputs it scales.
// Chunked attention, NoPE layers and the L2 q/k norm are the grouped-query attention's (ModelDesc::layer_types,
// nope_layers, l2_qk_norm).

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/forward_pass.h"

namespace easyplan::kernels::internal {

// Llama4Router: logits = x W^T, no bias; top-k; score = sigmoid(chosen logit), 0 for the others.
DistTensor ForwardPass::TopKSigmoidRouter(const DistTensor& x, const std::string& p) {
  const int64_t k = m_.top_k;
  const std::string router = p + "/" + m_.forward.moe.router;
  DistTensor logits = s_.Dot(x, P(router + "/kernel"), DotDims{{}, {}, {2}, {0}}, router);  // [B, S, E]
  return s_.Local(
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
}

// Llama4TextMoe's experts: every expert's INPUT scaled by its score (routed_in = x * router_scores),
// Llama4TextExperts (gate_up = x @ gate_up_proj [E, H, 2I]; gate, up = gate_up.chunk(2, -1);
// (up * silu(gate)) @ down_proj [E, I, H]) summed over the selected experts.
ForwardPass::RoutedExperts ForwardPass::InputScaledHalvesSiluExperts(const std::string& p) {
  const std::string gate_up = p + "/" + m_.forward.moe.gate_up, down = p + "/" + m_.forward.moe.down;
  RoutedExperts experts;
  experts.kernel = gate_up;
  experts.weighted_outputs = false;  // the scores scaled the inputs
  experts.outputs = [this, p, gate_up, down](const DistTensor& tokens, const DistTensor& local_scores) {
    DistTensor routed_in = s_.Mul(s_.Unsqueeze(local_scores, 3), s_.Unsqueeze(tokens, 2),
                                  p + " expert inputs scaled by the scores");  // [B, S, E, H]
    DistTensor y =
        s_.Dot(std::move(routed_in), ExpertKernel(gate_up, 2), DotDims{{2}, {0}, {3}, {1}}, gate_up);  // [E,B,S,2I]
    y = s_.Split(std::move(y), 3, 2, p + " gate / up halves");  // [E, B, S, 2, I]
    DistTensor gate = s_.Squeeze(s_.Narrow(y, 3, 0, 1, p + " gate"), 3);
    DistTensor up = s_.Squeeze(s_.Narrow(std::move(y), 3, 1, 1, p + " up"), 3);
    gate = s_.Map(std::move(gate), [](double v) { return v / (1.0 + std::exp(-v)); });
    DistTensor act = s_.Mul(std::move(gate), std::move(up), p + " experts silu(gate) * up");  // [E, B, S, I]
    return s_.Dot(act, ExpertKernel(down, 1), DotDims{{0}, {0}, {3}, {1}}, down);             // [E,B,S,H]
  };
  return experts;
}

}  // namespace easyplan::kernels::internal
