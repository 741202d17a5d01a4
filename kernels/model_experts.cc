// The routed experts of the reference forward pass (kernels/forward_pass.h): their MLPs (gated SwiGLU with
// separate gate and up kernels, or one gate_up kernel in halves), the layouts their kernels are stored in
// (schemas::ExpertsLayout), and the two ways a block runs them (schemas::ExpertsExecution): EasyDeL's fused
// MoE path (kernels/model_fused_moe.cc), or the module's own Python loop over experts, which DBRX and PhiMoE
// run instead of it:
//
//   DbrxExperts (EasyDeL c14e25c9 easydel/modules/dbrx/modeling_dbrx.py):
//     for index in range(moe_num_experts): out += sum(top_weights * (top_experts == index)) * mlp(x, index)
//     DbrxExpertGLU: w1, v1, w2 are [E x F, H]; expert_w1 = w1.reshape(E, F, H)[index];
//     mlp = (act(x @ expert_w1.T) * (x @ expert_v1.T)) @ expert_w2
//   PhiMoeSparseMoeBlock (EasyDeL 090a03b2 easydel/modules/phimoe/modeling_phimoe.py), on tokens flattened
//   to [B x S, H]: for index in range(num_local_experts): out += experts[index](x) * weight of index,
//     each expert a module PhiMoEBlockSparseTop2MLP with its own w1, w3 (ColumnParallelLinear) and w2.
//
// Every expert runs on every token, as the loop does (its unchosen tokens weigh zero), so the step model
// prices all E experts' matmuls: EasyDeL computes them. The loop's static slices of a sharded expert dim
// (DBRX's packed rows) each need the slice gathered; XLA's CSE of those gathers leaves one gather of the
// whole parameter per layer, which is what the reference issues (ExpertLoopKernel).
// (EasyDeL's newest DbrxExpertGLU, 090a03b2, multiplies x by expert_w1 untransposed, a shape error whenever
// d_model != ffn_hidden_size; the reference follows c14e25c9 and transformers' DbrxExpertGLU, which agree.)

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/forward_pass.h"

namespace easyplan::kernels {

Status CheckMoeBlock(const ModelDesc& model, const Mesh& mesh) {
  const schemas::ForwardStructure::Moe& moe = model.forward.moe;
  if (model.experts <= 0 || moe.block.empty()) return Status();
  const std::string structure = "forward structure '" + model.forward.name + "': ";
  // The input-scaling router needs experts that take scaled inputs, which only the halves experts do (Llama 4).
  if (moe.router_kind == schemas::RouterKind::kTopKSigmoidInput &&
      (moe.experts != schemas::ExpertsKind::kFusedHalvesSilu ||
       (moe.execution != schemas::ExpertsExecution::kFusedMoe &&
        moe.execution != schemas::ExpertsExecution::kScoreMaskedLoop))) {
    return Status::BadInput({}, structure +
                                    "moe.scoring 'top_k_sigmoid_input' scales the experts' inputs, which only "
                                    "moe.experts 'fused_halves_silu' on moe.execution 'fused_moe' or "
                                    "'score_masked_loop' does");
  }
  if (moe.execution == schemas::ExpertsExecution::kPerTokenGather) {
    // Plain JAX outside shard_map, as the expert loop: the gathers need nothing of the mesh.
    if (moe.experts != schemas::ExpertsKind::kInterleavedClampedGlu || moe.layout != schemas::ExpertsLayout::kStacked) {
      return Status::BadInput({}, structure +
                                      "moe.execution 'per_token_gather' takes rows of stacked kernels of "
                                      "moe.experts 'interleaved_clamped_glu' (moe.layout 'stacked')");
    }
    return Status();
  }
  if (moe.execution == schemas::ExpertsExecution::kScoreMaskedLoop) {
    if (moe.router_kind != schemas::RouterKind::kTopKSigmoidInput || moe.gate_up.empty() ||
        moe.layout != schemas::ExpertsLayout::kStacked) {
      return Status::BadInput({}, structure +
                                      "moe.execution 'score_masked_loop' runs stacked moe.gate_up kernels on "
                                      "inputs scaled by moe.scoring 'top_k_sigmoid_input'");
    }
    // Llama4TextExperts reshapes the T tokens to [E, T / E, H] (EasyDeL c14e25c9 modeling_llama4.py:192).
    const int64_t tokens = model.batch * model.seq;
    if (tokens % model.experts != 0) {
      return Status::BadInput(
          {}, fmt::format("{}moe.execution 'score_masked_loop' reshapes the {} tokens (batch {} x sequence {}) to "
                          "[experts, tokens / experts, hidden], which needs them divisible by the {} experts "
                          "(EasyDeL c14e25c9 easydel/modules/llama4/modeling_llama4.py:192)",
                          structure, tokens, model.batch, model.seq, model.experts));
    }
    return Status();
  }
  if (moe.router_kind == schemas::RouterKind::kSparseMixer && model.experts < 2) {
    return Status::BadInput(
        {}, structure + fmt::format("moe.scoring 'sparsemixer' picks two experts of {}", model.experts));
  }
  if (moe.layout == schemas::ExpertsLayout::kPerExpert) {
    for (const std::string* name : {&moe.gate, &moe.up, &moe.down}) {
      if (name->find("{e}") == std::string::npos) {
        return Status::BadInput({}, structure +
                                        "moe.layout 'per_expert' names each expert's module with '{e}', "
                                        "found '" +
                                        *name + "' among moe.gate, moe.up and moe.down");
      }
    }
  }
  if (moe.execution == schemas::ExpertsExecution::kExpertLoop) {
    // The loop is plain JAX outside shard_map: nothing about the mesh constrains it.
    if (moe.experts != schemas::ExpertsKind::kGatedSilu) {
      return Status::BadInput({}, structure +
                                      "moe.execution 'expert_loop' runs moe.experts 'gated_silu' (separate "
                                      "gate, up and down kernels)");
    }
    return Status();
  }
  if (moe.layout == schemas::ExpertsLayout::kPerExpert) {
    return Status::BadInput({}, structure +
                                    "moe.layout 'per_expert' has no stacked expert kernel for the fused MoE path "
                                    "to shard: such a module loops over its experts (moe.execution 'expert_loop')");
  }
  return CheckFusedMoe(model, mesh);
}

}  // namespace easyplan::kernels

namespace easyplan::kernels::internal {

std::string ForwardPass::ExpertParam(const std::string& p, const std::string& name) const {
  return p + "/" + name + (m_.expert_kernel_leaf.empty() ? "" : "/" + m_.expert_kernel_leaf);
}

DistTensor ForwardPass::StackedExperts(const std::string& name, ExpertRole role) {
  const DistTensor& stored = P(name);
  DistTensor t;
  switch (m_.forward.moe.layout) {
    case schemas::ExpertsLayout::kStacked:
    case schemas::ExpertsLayout::kPerExpert:  // never on the fused path (CheckMoeBlock)
      return stored;
    case schemas::ExpertsLayout::kExpertsLast:  // [in, out, E] -> [E, in, out]
      if (stored.rank() != 3) return stored;
      t = s_.Transpose(stored, {2, 0, 1});
      break;
    case schemas::ExpertsLayout::kPackedRows:  // [E x F, H] -> [E, F, H]; an input projection is [E, H, F]
      if (stored.rank() != 2) return stored;
      t = s_.Split(stored, 0, m_.experts, name + " (packed experts)");
      if (role == ExpertRole::kInput) t = s_.Transpose(std::move(t), {0, 2, 1});
      break;
  }
  t.parameter = true;
  s_.Untrack(t);
  return t;
}

DistTensor ForwardPass::ExpertLoopKernel(const std::string& name) {
  const schemas::ExpertsLayout layout = m_.forward.moe.layout;
  if (layout == schemas::ExpertsLayout::kPerExpert) return DistTensor();
  const DistTensor& stored = P(name);
  const size_t expert_dim = layout == schemas::ExpertsLayout::kExpertsLast ? 2 : 0;
  if (stored.spec.dims[expert_dim].empty()) return stored;
  DistSpec whole = stored.spec;
  whole.dims[expert_dim].clear();
  DistTensor gathered = s_.Reshard(stored, whole, name + " (every expert's slice, gathered once)");
  gathered.parameter = true;
  s_.Untrack(gathered);
  return gathered;
}

DistTensor ForwardPass::ExpertOf(const DistTensor& gathered, const std::string& name, int64_t e, ExpertRole role) {
  const std::string what = fmt::format("{} (expert {})", name, e);
  DistTensor t;
  switch (m_.forward.moe.layout) {
    case schemas::ExpertsLayout::kPerExpert: {
      std::string module = name;
      module.replace(module.find("{e}"), 3, std::to_string(e));
      return P(module);
    }
    case schemas::ExpertsLayout::kStacked:
      t = s_.Squeeze(s_.Narrow(gathered, 0, e, 1, what), 0);
      break;
    case schemas::ExpertsLayout::kExpertsLast:
      t = s_.Squeeze(s_.Narrow(gathered, 2, e, 1, what), 2);
      break;
    case schemas::ExpertsLayout::kPackedRows: {  // rows e*F .. (e+1)*F: [out, in] for an input projection
      const int64_t width = gathered.shape[0] / m_.experts;
      t = s_.Narrow(gathered, 0, e * width, width, what);
      if (role == ExpertRole::kInput) t = s_.Transpose(std::move(t), {1, 0});
      break;
    }
  }
  t.parameter = true;
  s_.Untrack(t);
  return t;
}

DistTensor ForwardPass::ExpertLoop(const DistTensor& x, const DistTensor& weights, const std::string& p,
                                   const DistSpec& out_spec) {
  const schemas::ForwardStructure::Moe& moe = m_.forward.moe;
  const std::string w_gate = ExpertParam(p, moe.gate), w_up = ExpertParam(p, moe.up), w_down = ExpertParam(p, moe.down);
  const DistTensor gate_all = ExpertLoopKernel(w_gate), up_all = ExpertLoopKernel(w_up),
                   down_all = ExpertLoopKernel(w_down);
  DistTensor out;
  for (int64_t e = 0; e < m_.experts; ++e) {
    const std::string what = fmt::format("{} expert {}", p, e);
    DistTensor gate = s_.Dot(x, ExpertOf(gate_all, w_gate, e, ExpertRole::kInput), DotDims{{}, {}, {2}, {0}},
                             fmt::format("{} (expert {})", w_gate, e));
    gate = s_.Map(std::move(gate), [](double v) { return v / (1.0 + std::exp(-v)); });
    DistTensor up = s_.Dot(x, ExpertOf(up_all, w_up, e, ExpertRole::kInput), DotDims{{}, {}, {2}, {0}},
                           fmt::format("{} (expert {})", w_up, e));
    DistTensor act = s_.Mul(std::move(gate), std::move(up), what + " silu(gate) * up");
    // The loop's sum is constrained where the block's output lives, and XLA's propagation carries that
    // layout back to each expert's product.
    DistTensor y = s_.Dot(act, ExpertOf(down_all, w_down, e, ExpertRole::kOutput), DotDims{{}, {}, {2}, {0}},
                          fmt::format("{} (expert {})", w_down, e), {.user = &out_spec});
    y = s_.Reshard(std::move(y), out_spec, what + " output constraint");
    y = s_.Mul(std::move(y), s_.Narrow(weights, 2, e, 1, what + " routing weight"), what + " weighted");
    out = e == 0 ? std::move(y) : s_.Add(std::move(out), std::move(y), p + " sum over experts");
  }
  return out;
}

// Every expert on every token, weighted by the routing weights (exactly the sparse sum, since
// unselected experts weigh zero): [B,S,H] x [E,H,I] -> [B,S,E,I]; [B,S,E,I] x [E,I,H] -> [E,B,S,H].
ForwardPass::RoutedExperts ForwardPass::GatedSiluExperts(const std::string& p) {
  const schemas::ForwardStructure::Moe& moe = m_.forward.moe;
  RoutedExperts experts;
  const std::string w_gate = ExpertParam(p, moe.gate), w_up = ExpertParam(p, moe.up), w_down = ExpertParam(p, moe.down);
  experts.kernel = w_gate;
  experts.outputs = [this, p, w_gate, w_up, w_down](const DistTensor& tokens, const DistTensor&) {
    DistTensor gate = s_.Dot(tokens, ExpertKernel(w_gate, 2), DotDims{{}, {}, {2}, {1}}, w_gate);  // [B,S,E,I]
    gate = s_.Map(std::move(gate), [](double v) { return v / (1.0 + std::exp(-v)); });
    DistTensor up = s_.Dot(tokens, ExpertKernel(w_up, 2), DotDims{{}, {}, {2}, {1}}, w_up);
    DistTensor act = s_.Mul(std::move(gate), std::move(up), p + " experts silu(gate) * up");
    return s_.Dot(act, ExpertKernel(w_down, 1), DotDims{{2}, {0}, {3}, {1}}, w_down);  // [E, B, S, H]
  };
  return experts;
}

// One gate_up kernel [E, H, 2I] in halves (gate, then up) and a down kernel [E, I, H]: Llama4TextExperts
// (transformers modeling_llama4.py: gate_up = x @ gate_up_proj; gate, up = gate_up.chunk(2, -1);
// (up * silu(gate)) @ down_proj) and GraniteMoeMoE (modeling_granitemoe.py: input_linear, chunk(2, dim=-1),
// act(first) * second, output_linear). Llama 4's router scores scale each expert's INPUT (routed_in =
// x * router_scores, Llama4TextMoe), the others weight the outputs.
ForwardPass::RoutedExperts ForwardPass::HalvesSiluExperts(const std::string& p) {
  const schemas::ForwardStructure::Moe& moe = m_.forward.moe;
  // moe.gate_up null: the halves stored as two kernels, gate and up (EasyDeL 090a03b2's Llama 4).
  const bool split = moe.gate_up.empty();
  const std::string gate_up = split ? "" : ExpertParam(p, moe.gate_up), down = ExpertParam(p, moe.down);
  const std::string w_gate = split ? ExpertParam(p, moe.gate) : "", w_up = split ? ExpertParam(p, moe.up) : "";
  const bool scale_inputs = moe.router_kind == schemas::RouterKind::kTopKSigmoidInput;
  RoutedExperts experts;
  experts.kernel = split ? w_gate : gate_up;
  experts.weighted_outputs = !scale_inputs;
  experts.outputs = [this, p, gate_up, w_gate, w_up, down, split, scale_inputs](const DistTensor& tokens,
                                                                                const DistTensor& local_scores) {
    // x [B,S,H] (or the scaled inputs [B,S,E,H]) times a kernel [E,H,N]: [B,S,E,N] (scaled: [E,B,S,N]).
    DistTensor routed_in;
    if (scale_inputs) {
      routed_in = s_.Mul(s_.Unsqueeze(local_scores, 3), s_.Unsqueeze(tokens, 2),
                         p + " expert inputs scaled by the scores");  // [B,S,E,H]
    }
    auto project = [&](const std::string& kernel) {
      if (scale_inputs) return s_.Dot(routed_in, ExpertKernel(kernel, 2), DotDims{{2}, {0}, {3}, {1}}, kernel);
      return s_.Dot(tokens, ExpertKernel(kernel, 2), DotDims{{}, {}, {2}, {1}}, kernel);
    };
    DistTensor gate, up;
    if (split) {
      gate = project(w_gate);
      up = project(w_up);
    } else {
      DistTensor y = s_.Split(project(gate_up), 3, 2, p + " gate / up halves");  // [., ., ., 2, I]
      gate = s_.Squeeze(s_.Narrow(y, 3, 0, 1, p + " gate"), 3);
      up = s_.Squeeze(s_.Narrow(std::move(y), 3, 1, 1, p + " up"), 3);
    }
    gate = s_.Map(std::move(gate), [](double v) { return v / (1.0 + std::exp(-v)); });
    DistTensor act = s_.Mul(std::move(gate), std::move(up), p + " experts silu(gate) * up");
    if (scale_inputs) return s_.Dot(act, ExpertKernel(down, 1), DotDims{{0}, {0}, {3}, {1}}, down);  // [E,B,S,H]
    return s_.Dot(act, ExpertKernel(down, 1), DotDims{{2}, {0}, {3}, {1}}, down);                    // [E,B,S,H]
  };
  return experts;
}

}  // namespace easyplan::kernels::internal
