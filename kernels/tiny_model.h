#ifndef EASYPLAN_KERNELS_TINY_MODEL_H_
#define EASYPLAN_KERNELS_TINY_MODEL_H_

// The tiny model `easyplan check` executes (docs/CHECK.md): a model of the same family and structure as
// the full one, small enough to run on simulated devices, sized so the same mesh and rules shard it the
// same way. What a family's tiny config sets is data (the `numeric_check:` block of
// schemas/families/<model_type>.yaml, parsed by schemas/numeric_check_spec.h); the sizes it names are
// computed here from the mesh and the full model's dims:
//
//   hidden              64 rounded up to a multiple of the device count (so any sharding by mesh axes
//                       divides it)
//   intermediate        2 x hidden
//   vocab               128 rounded up to the device count, plus 1 when the full vocabulary is not a
//                       multiple of the device count under --uneven replicate (so eformer's correction
//                       replicates it in the tiny plan as in the full one)
//   head_dim            8
//   head unit           a head count that keeps heads x head_dim divisible by the device count and the
//                       heads by the head axis: lcm(devices / gcd(devices, head_dim), head-axis size)
//   mha_heads           4 rounded up to the head unit (MHA and MLA: as many kv heads as heads)
//   mha_width           mha_heads x head_dim (GPT-2's n_embd)
//   gqa_kv_heads        the head unit when the full model has one kv head, else 2 rounded up to it (at
//                       least two kv groups, so the kv-head split is exercised)
//   gqa_heads           gqa_kv_heads x the full model's heads per kv head (its GQA ratio)
//   gqa_width           gqa_heads x head_dim (Falcon's new-architecture hidden_size)
//   linear_value_heads  gqa_kv_heads x the full model's linear value heads per linear key head (Qwen3-Next's
//                       Gated DeltaNet, with gqa_kv_heads key heads)
//   experts             max(2 x top-k, 4) rounded up to the device count
//   grouped_experts     max(4 x top-k, 2 x n_group, 4) rounded up to lcm(devices, n_group) (group-limited
//                       routing keeps whole groups)
//   small_width         32 rounded up to the device count (MoE expert width, MLA ranks)
//   first_dense_layers  min(the full model's first_k_dense_replace, 1): one dense layer before the MoE
//                       layers when the full model has any
//   layers              2, or the pipeline's model chunks (pp x virtual stages) when there are more: a
//                       pipelined check runs at least one layer in every chunk (docs/PIPELINE.md)

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/json.h"
#include "core/mesh.h"
#include "core/param_tree.h"
#include "core/status.h"
#include "kernels/model.h"
#include "planner/layout.h"
#include "planner/plan.h"
#include "schemas/model_dims.h"
#include "schemas/numeric_check_spec.h"

namespace easyplan::kernels {

/// The tiny model of a full one: how to derive its config, and the forward pass that runs it.
struct TinyModel {
  schemas::ForwardStructure structure;  ///< the family's forward structure (schemas/forwards.yaml)
  /// The keys the tiny config sets over the full one, in order (applied after the user's --set).
  Json overrides = Json::object();
  /// The same as `--set KEY=VALUE` strings ("num_hidden_layers=2", "layer_types=null"): how check
  /// reports the derivation (tiny_config_sets) and names it when the tiny config does not resolve.
  std::vector<std::string> sets;
  /// The key that sets the experts a token takes (schemas::NumericCheckSpec::top_k_key).
  std::string top_k_key = "num_experts_per_tok";
};

/// Derives the tiny model of the full model `full` planned on `mesh` with `uneven` (and, on a pipelined
/// mesh, `pipeline_chunks` model chunks), as `spec` (the family's numeric_check block for that model)
/// declares. Errors: a size name kernels does not know, naming the family file and line.
StatusOr<TinyModel> DeriveTinyModel(const schemas::NumericCheckSpec& spec, const schemas::ModelDims& full,
                                    const Mesh& mesh, planner::UnevenMode uneven, int64_t pipeline_chunks = 1);

/// The full-size model of `spec`'s family: its forward structure, no overrides (what the dry run of
/// `easyplan cost` runs).
TinyModel FullSizeModel(const schemas::NumericCheckSpec& spec);

/// `overrides` as `--set KEY=VALUE` strings, each value in compact JSON.
std::vector<std::string> SetStrings(const Json& overrides);

/// What the reference forward pass needs to know about the tiny model: its resolved dims, what its tree
/// holds of the structure's optional parameters (biases, q/k norms, which norm of each slot, the router's
/// score bias, which layers are sparse), and
/// from its plan the activation batch and sequence (the batch and sequence axes divide them) and the
/// bytes a collective moves per element.
ModelDesc ModelDescOf(const TinyModel& tiny, const schemas::ModelDims& dims, const ParamTree& tree,
                      const planner::Plan& plan);

/// The settings under which `easyplan memory` predicts what the reference measures in training: each
/// layer keeps only its input (nothing_saveable), attention materialises its scores (vanilla), and
/// every expert sees every token (the reference weights all E experts instead of dispatching k), set
/// through the family's own key for it (`top_k_key`, TinyModel::top_k_key); not for a per-token gather
/// (schemas::ExpertsExecution::kPerTokenGather), which takes each token's k experts as EasyDeL does.
Json ReferenceTrainingOverrides(const ModelDesc& model, const std::string& top_k_key);

}  // namespace easyplan::kernels

#endif  // EASYPLAN_KERNELS_TINY_MODEL_H_
