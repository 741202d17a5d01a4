// EasyDeL's fused MoE path (moe_method "fused_moe", its default) in the reference forward pass, as
// easydel/layers/moe/_moe_module.py `_sparse_moe_call` runs it at EasyDeL 090a03b2 (docs/COST.md, "Mixture
// of experts"). The block runs under shard_map on the expert mesh EasyDeL folds out of the model mesh
// (ModelDesc::expert_*_axes: dp', ep' = fsdp x ep x sp by default, tp' = tp):
//  1. Entry: tokens [B, S, H] and routing weights [B, S, E] enter sharded on dp' only (in_specs
//     P(dp, None, None)), so they are gathered over everything else; expert weights enter as
//     [E / ep', H, I / tp'] and [E / ep', I / tp', H], where they already lie. No expert weight moves.
//  2. Each device runs its own experts on the rows routed to them (grouped matmuls), leaving sums
//     partial over tp' (the contraction over I / tp').
//  3. psum_scatter over tp' of the whole [B S K, H] row buffer: rows of H / tp'.
//  4. ragged_all_to_all over ep': each device sends the rows it computed to every peer, which rebuilds the
//     group's row buffer (a ragged all-gather of expert outputs); tokens never travel to the experts.
//  5. unpermute: each token sums its K rows, weighted by the routing weights.
// The backward pass follows shard_map's transpose: the inputs' gradients are summed over the axes the
// inputs are replicated on (ep' and tp'), recorded here as backward-only all-reduces.
//
// The rows are held as [B, S, K, H] (a token's K routed slots), zero where another device computed
// the row, so the ragged all-to-all's union of rows is their exact sum. Routing is what the model
// computes; the bytes the ragged all-to-all records are the rows this routing sends, and
// CommRecord::expected_bytes what balanced routing sends, which the step model prices.

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/forward_pass.h"

namespace easyplan::kernels::internal {
namespace {

// The axes of `names` that cut anything (size > 1): the groups the block's collectives run over.
std::vector<int> AxisIndices(const Mesh& mesh, const PartitionSpec::Entry& names) {
  std::vector<int> axes = EntryAxes(mesh, names);
  std::erase_if(axes, [&mesh](int a) { return mesh.shape[static_cast<size_t>(a)] == 1; });
  return axes;
}

std::vector<std::string> NamesOf(const Mesh& mesh, const std::vector<int>& axes) {
  std::vector<std::string> names;
  for (int a : axes) names.push_back(mesh.axis_names[static_cast<size_t>(a)]);
  return names;
}

}  // namespace
}  // namespace easyplan::kernels::internal

namespace easyplan::kernels {

Status CheckFusedMoe(const ModelDesc& model, const Mesh& mesh) {
  if (model.experts <= 0) return Status();
  if (model.axes.expert_tensor_mode) {
    // _sparse_moe_call: "if self.config.use_expert_tensor_mode: if tp_size != 1: raise ValueError".
    const int64_t tp = EntryTiles(mesh, model.axes.expert_tensor);
    if (tp != 1) {
      return Status::BadInput({},
                              fmt::format("use_expert_tensor_mode needs the expert mesh's tp of 1, found {}: "
                                          "EasyDeL's fused MoE path raises on this mesh",
                                          tp),
                              {"--set use_expert_tensor_mode=false, or a mesh with tp=1"});
    }
  }
  const int64_t tiles = EntryTiles(mesh, model.axes.expert);
  std::vector<std::string> names;
  for (int a : EntryAxes(mesh, model.axes.expert)) {
    names.push_back(fmt::format("{}={}", mesh.axis_names[static_cast<size_t>(a)], mesh.shape[static_cast<size_t>(a)]));
  }
  if (model.experts % tiles == 0) return Status();
  return Status::BadInput(
      {},
      fmt::format("the {} routed experts do not split over EasyDeL's folded expert axis of {} ({}): its fused MoE "
                  "path (shard_map over the expert mesh) cannot run on this mesh",
                  model.experts, tiles, fmt::join(names, " x ")),
      {"fsdp and sp join the expert axis while fsdp_is_ep_bound / sp_is_ep_bound are true (the defaults); "
       "--set fsdp_is_ep_bound=false keeps tokens sharded over fsdp and the experts whole inside the block"});
}

}  // namespace easyplan::kernels

namespace easyplan::kernels::internal {

PartitionSpec::Entry ForwardPass::ExpertShardAxes(const DistTensor& stored) const {
  // The stored expert dim already split over exactly the folded axes keeps its order (the fold is
  // assumed to line its devices up with them); anything else is moved to the fold's own order.
  const Mesh& mesh = s_.geo().mesh();
  std::vector<int> fold = AxisIndices(mesh, m_.axes.expert);
  std::vector<int> have;
  for (int a : stored.spec.dims[0]) {
    if (mesh.shape[static_cast<size_t>(a)] > 1) have.push_back(a);
  }
  std::vector<int> a = fold, b = have;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return NamesOf(mesh, a == b ? have : fold);
}

DistTensor ForwardPass::ExpertKernel(const std::string& name, int tensor_dim) {
  // [E, in, out] whatever the stored layout: the expert width is `out` of an input projection.
  const DistTensor stored = StackedExperts(name, tensor_dim == 2 ? ExpertRole::kInput : ExpertRole::kOutput);
  std::vector<PartitionSpec::Entry> entries(static_cast<size_t>(stored.rank()));
  entries[0] = ExpertShardAxes(stored);
  if (tensor_dim > 0) entries[static_cast<size_t>(tensor_dim)] = m_.axes.expert_tensor;
  return s_.Reshard(stored, ActivationSpec(s_.geo().mesh(), entries), name + " (fused moe expert layout)");
}

DistTensor ForwardPass::FusedMoe(DistTensor x, DistTensor weights, const RoutedExperts& experts, const std::string& p) {
  const Mesh& mesh = s_.geo().mesh();
  const MeshGeometry& geo = s_.geo();
  const int64_t k = m_.top_k, n_experts = weights.shape[2];
  const std::vector<int> ep_axes = AxisIndices(mesh, m_.axes.expert);
  const std::vector<int> tp_axes = AxisIndices(mesh, m_.axes.expert_tensor);
  std::vector<int> replicated = ep_axes;  // the axes the shard_map's inputs are replicated on
  replicated.insert(replicated.end(), tp_axes.begin(), tp_axes.end());

  // 1. Entry, and its backward: the input gradients summed over ep' x tp'.
  CommLog* log = s_.comm().log();
  const size_t first_entry_record = log != nullptr ? log->records.size() : 0;
  const DistSpec tokens_spec = ActivationSpec(mesh, {m_.axes.expert_data, {}, {}});
  DistTensor tokens = s_.Reshard(std::move(x), tokens_spec, p + " fused moe entry (tokens)");
  DistTensor probs = s_.Reshard(std::move(weights), tokens_spec, p + " fused moe entry (routing weights)");
  if (log != nullptr) {
    for (size_t i = first_entry_record; i < log->records.size(); ++i)
      log->records[i].backward = CommRecord::Backward::kNone;
  }
  s_.comm().BackwardAllReduce(tokens, replicated, tokens.local.empty() ? 0 : tokens.local[0].size(),
                              p + " fused moe input gradient (tokens)");
  s_.comm().BackwardAllReduce(probs, replicated, probs.local.empty() ? 0 : probs.local[0].size(),
                              p + " fused moe input gradient (routing weights)");

  // 2. Every local expert's output [E, B, S, H], partial over tp'.
  const std::vector<PartitionSpec::Entry> local_experts = {
      m_.axes.expert_data, {}, ExpertShardAxes(StackedExperts(experts.kernel, ExpertRole::kInput))};
  DistTensor local_probs = s_.Reshard(probs, ActivationSpec(mesh, local_experts), p + " local experts' weights");
  DistTensor outputs = [&] {
    const Spmd::RoutedExperts routed(s_);
    return experts.outputs(tokens, local_probs);
  }();
  tokens = DistTensor();
  local_probs = DistTensor();

  // Each token's K slots: slot j holds its j-th selected expert (in expert order), with the routing
  // weight when outputs are weighted. Counted per device: the rows other shards compute.
  DistTensor slots = s_.Broadcast(s_.Unsqueeze(std::move(probs), 2), 2, k);  // [B, S, K, E]
  const int64_t shards = geo.Tiles(ep_axes), per_shard = n_experts / std::max<int64_t>(1, shards);
  std::vector<int64_t> received;
  int64_t block = 0;
  const bool weighted = experts.weighted_outputs;
  slots = s_.Local(
      std::move(slots), {2, 3},
      [&](HostTensor& t, const std::vector<Range>&) {
        const int64_t own = geo.BlockIndex(geo.LocalDevice(static_cast<size_t>(block++)), ep_axes);
        int64_t others = 0;
        const int64_t tokens_here = t.size() / (k * n_experts);
        for (int64_t r = 0; r < tokens_here; ++r) {
          double* row = t.data.data() + r * k * n_experts;
          std::vector<std::pair<int64_t, double>> chosen;
          for (int64_t e = 0; e < n_experts; ++e) {
            if (row[e] != 0.0) chosen.emplace_back(e, row[e]);
          }
          std::fill(row, row + k * n_experts, 0.0);
          for (size_t j = 0; j < chosen.size() && static_cast<int64_t>(j) < k; ++j) {
            const auto [e, w] = chosen[j];
            row[static_cast<int64_t>(j) * n_experts + e] = weighted ? w : 1.0;
            if (e / per_shard != own) ++others;
          }
        }
        received.push_back(others);
      },
      p + " routed slots");
  slots = s_.Reshard(std::move(slots), ActivationSpec(mesh, {m_.axes.expert_data, {}, {}, local_experts[2]}),
                     p + " local experts' slots");

  // The rows [B, S, K, H]: slot j of a token is its j-th expert's output on this device, zero on the
  // others (a permutation of rows, not a matmul); partial over ep' and tp'.
  const DotDims rows_dims{{0, 1}, {1, 2}, {3}, {0}};
  DistTensor rows = s_.Dot(slots, outputs, rows_dims, p + " permute rows", {.keep_partial = true, .matmul = false});
  outputs = DistTensor();

  // 3. psum_scatter over tp' of the row buffer.
  if (!tp_axes.empty()) rows = s_.comm().ReduceScatter(std::move(rows), tp_axes, 3, p + " fused moe psum_scatter (tp)");
  if (!experts.down_bias.empty()) {  // each row's expert bias, in the rows' layout
    DistTensor bias = ExpertKernel(experts.down_bias, 1);
    DistTensor bias_rows = s_.Dot(slots, bias, DotDims{{}, {}, {3}, {0}}, experts.down_bias, {.matmul = false});
    rows = s_.Add(std::move(rows), std::move(bias_rows), experts.down_bias + " per row");
  }
  slots = DistTensor();

  // 4. ragged_all_to_all over ep'.
  const int64_t row_elements = rows.local.empty() ? 0 : rows.local[0].shape[3];
  const int64_t rows_here = rows.local.empty() ? 0 : rows.local[0].shape[0] * rows.local[0].shape[1] * k;
  const int64_t expected = shards > 1 ? rows_here * (shards - 1) / shards : 0;
  if (!ep_axes.empty()) {
    rows = s_.comm().RaggedAllToAll(std::move(rows), ep_axes, received, expected, row_elements,
                                    p + " fused moe ragged_all_to_all (expert outputs)");
  }
  // 5. unpermute: each token's K rows summed.
  return s_.Squeeze(s_.Reduce(std::move(rows), 2, ReduceOp::kSum, p + " unpermute"), 2);
}

}  // namespace easyplan::kernels::internal
