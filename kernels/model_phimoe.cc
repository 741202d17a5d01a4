// The sparsemixer router of PhiMoE in the reference forward pass (RouterKind::kSparseMixer), as EasyDeL runs
// it: PhiMoeSparseMoeBlock.__call__ at EasyDeL 090a03b2 (easydel/modules/phimoe/modeling_phimoe.py) takes
// `deterministic=True` unless told otherwise, and PhiMoeDecoderLayer calls it without the argument, so the
// evaluation form `_sparsemixer_eval(router_logits, jitter_eps=router_jitter_noise)` routes every step,
// training included. It always picks two experts, whatever num_experts_per_tok says.

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/forward_pass.h"

namespace easyplan::kernels::internal {
namespace {

// jax.nn.softmax(where(masked, -inf, gates))[index]: the share of `index` among the unmasked gates.
double MaskedSoftmaxAt(const std::vector<double>& gates, const std::vector<bool>& masked, size_t index) {
  double top = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < gates.size(); ++i) {
    if (!masked[i]) top = std::max(top, gates[i]);
  }
  double sum = 0.0;
  for (size_t i = 0; i < gates.size(); ++i) {
    if (!masked[i]) sum += std::exp(gates[i] - top);
  }
  return std::exp(gates[index] - top) / sum;
}

}  // namespace

// _sparsemixer_eval, one token:
//   max_vals, max_ind = max(scores), argmax(scores)
//   factor = maximum(|scores|, max_vals); mask = (max_vals - scores) / factor > 2 jitter_eps
//   multiplier_1 = softmax(where(mask, -inf, scores))[max_ind]
//   masked_scores = scores with max_ind set to -inf; max_vals_2, max_ind_2 = max, argmax of masked_scores
//   factor_2 = maximum(|scores|, max_vals_2); mask_2 = (max_vals_2 - scores) / factor_2 > 2 jitter_eps
//   multiplier_2 = softmax(where(mask_2, -inf, masked_scores))[max_ind_2]
// jnp.argmax takes the first of equal maxima.
void SparseMixerRow(const double* v, int64_t e, double jitter, double* w) {
  const auto n = static_cast<size_t>(e);
  const std::vector<double> scores(v, v + e);
  const double inf = std::numeric_limits<double>::infinity();
  auto mask_below = [&](double best, std::vector<bool>& masked) {
    for (size_t i = 0; i < n; ++i) {
      const double factor = std::max(std::abs(scores[i]), best);
      masked[i] = masked[i] || (best - scores[i]) / factor > 2.0 * jitter;
    }
  };
  const size_t first = static_cast<size_t>(std::max_element(scores.begin(), scores.end()) - scores.begin());
  std::vector<bool> masked(n, false);
  mask_below(scores[first], masked);
  const double multiplier_1 = MaskedSoftmaxAt(scores, masked, first);

  std::vector<double> rest = scores;
  rest[first] = -inf;
  const size_t second = static_cast<size_t>(std::max_element(rest.begin(), rest.end()) - rest.begin());
  std::vector<bool> masked_2(n, false);
  masked_2[first] = true;  // its gate is -inf
  mask_below(rest[second], masked_2);
  const double multiplier_2 = MaskedSoftmaxAt(rest, masked_2, second);

  std::fill(w, w + e, 0.0);
  w[first] = multiplier_1;
  w[second] = multiplier_2;
}

// router_logits = gate(hidden_states) (a ColumnParallelLinear without bias); the sparsemixer over each
// token's logits gives its two experts' weights, zero for the others.
DistTensor ForwardPass::SparseMixerRouter(const DistTensor& x, const std::string& p) {
  const double jitter = m_.router_jitter_noise;
  return s_.Local(
      Linear(x, p + "/" + m_.forward.moe.router, m_.router_bias), {2},
      [jitter](HostTensor& t, const std::vector<Range>&) {
        const int64_t e = t.shape[2];
        std::vector<double> w(static_cast<size_t>(e));
        for (int64_t r = 0; r < t.size() / e; ++r) {
          double* v = t.data.data() + r * e;
          SparseMixerRow(v, e, jitter, w.data());
          std::copy(w.begin(), w.end(), v);
        }
      },
      p + " router sparsemixer");
}

}  // namespace easyplan::kernels::internal
