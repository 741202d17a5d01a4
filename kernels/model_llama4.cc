// Mechanisms of Llama 4 (transformers src/transformers/models/llama4/modeling_llama4.py) in the reference
// forward pass: the top_k_sigmoid_input router, whose scores scale the fused_halves_silu experts' inputs
// (ForwardPass::HalvesSiluExperts, kernels/model_experts.cc).
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

}  // namespace easyplan::kernels::internal
