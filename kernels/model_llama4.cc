// Mechanisms of Llama 4 (transformers src/transformers/models/llama4/modeling_llama4.py) in the reference
// forward pass: the top_k_sigmoid_input router, whose scores scale the fused_halves_silu experts' inputs
// (ForwardPass::HalvesSiluExperts, kernels/model_experts.cc), and the loop EasyDeL c14e25c9 ran instead.
// Chunked attention, NoPE layers and the L2 q/k norm are the grouped-query attention's (ModelDesc::layer_types,
// nope_layers, l2_qk_norm).

#include <fmt/format.h>

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
  return RankRows(
      s_, std::move(logits),
      [k](double* v, const std::vector<int64_t>& order) {
        std::vector<double> w(order.size(), 0.0);
        for (int64_t i = 0; i < k; ++i) {
          const auto j = static_cast<size_t>(order[static_cast<size_t>(i)]);
          w[j] = 1.0 / (1.0 + std::exp(-v[j]));
        }
        std::copy(w.begin(), w.end(), v);
      },
      p + " router top-k sigmoid");
}

// Llama4TextMoe at EasyDeL c14e25c9 (easydel/modules/llama4/modeling_llama4.py:325-349) loops over the E
// experts; pass e scales the flattened tokens [T, H] by expert e's score (zero for the tokens that did not
// choose it) and calls Llama4TextExperts (:191-196), which reshapes them to [E, T / E, H] and runs the stacked
// experts as one batched matmul: chunk j of consecutive tokens goes through expert j. transformers repeats the
// tokens E times first (hidden_states.repeat(num_experts, 1)), so expert j sees every token scaled by its own
// score; c14e25c9 does not, so a token's output comes from the expert its position picks, scaled by the score
// of the one it chose. The reference runs what EasyDeL ran: E passes, each of the whole batch through all the
// experts, E times the matmuls of a dense MLP of the experts' width.
// x [B, S, H], scores [B, S, E] -> [B, S, H], each pass's output constrained to `out_spec`.
DistTensor ForwardPass::ScoreMaskedLoop(const DistTensor& x, const DistTensor& scores, const std::string& p,
                                        const DistSpec& out_spec) {
  const schemas::ForwardStructure::Moe& moe = m_.forward.moe;
  const std::string gate_up = ExpertParam(p, moe.gate_up), down = ExpertParam(p, moe.down);
  const int64_t batch = x.shape[0], experts = m_.experts;
  DistTensor out;
  for (int64_t e = 0; e < experts; ++e) {
    const std::string what = fmt::format("{} pass {}", p, e);
    DistTensor masked = s_.Mul(x, s_.Narrow(scores, 2, e, 1, what + " score"), what + " scaled tokens");
    DistTensor chunks =
        s_.Split(s_.Merge(std::move(masked), 0, what + " tokens [T, H]"), 0, experts, what + " tokens [E, T / E, H]");
    DistTensor y = s_.Dot(chunks, P(gate_up), DotDims{{0}, {0}, {2}, {1}}, gate_up);  // [E, T/E, 2F]
    y = s_.Split(std::move(y), 2, 2, what + " gate / up halves");                     // [E, T/E, 2, F]
    DistTensor gate = s_.Squeeze(s_.Narrow(y, 2, 0, 1, what + " gate"), 2);
    DistTensor up = s_.Squeeze(s_.Narrow(std::move(y), 2, 1, 1, what + " up"), 2);
    gate = s_.Map(std::move(gate), [](double v) { return v / (1.0 + std::exp(-v)); });
    DistTensor act = s_.Mul(std::move(gate), std::move(up), what + " silu(gate) * up");
    y = s_.Dot(act, P(down), DotDims{{0}, {0}, {2}, {1}}, down);  // [E, T/E, H]
    y = s_.Split(s_.Merge(std::move(y), 0, what + " output [T, H]"), 0, batch, what + " output [B, S, H]");
    y = s_.Reshard(std::move(y), out_spec, what + " output constraint");
    out = e == 0 ? std::move(y) : s_.Add(std::move(out), std::move(y), p + " sum over passes");
  }
  return out;
}

}  // namespace easyplan::kernels::internal
