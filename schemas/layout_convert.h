#ifndef EASYPLAN_SCHEMAS_LAYOUT_CONVERT_H_
#define EASYPLAN_SCHEMAS_LAYOUT_CONVERT_H_

// EasyDeL's StateDictConverter naming and orientation rules (easydel/utils/parameters_transformation.py), one tensor at
// a time: how a HuggingFace checkpoint tensor becomes an EasyDeL parameter and back.
//
//   model.layers.0.mlp.down_proj.weight [H, I]   <->  model/layers/0/mlp/down_proj/kernel [I, H]
//   model.embed_tokens.weight [V, H]             <->  model/embed_tokens/embedding [V, H]
//   model.layers.3.mlp.experts.{0..E-1}.w1.weight [I, H] each  <->  model/layers/3/mlp/experts/w1/kernel [E, H, I]

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/shape.h"
#include "core/status.h"
#include "schemas/tree_template.h"

namespace easyplan::schemas {

/// The placeholder of the expert index in a per-expert HF name ("...experts.{expert}.w1.weight").
inline constexpr std::string_view kExpertPlaceholder = "{expert}";

struct NamedShape {
  std::string name;
  Shape shape;
  friend bool operator==(const NamedShape&, const NamedShape&) = default;
};

/// HF -> EasyDeL for one tensor. `hf_name` is dotted; with `experts > 0` it holds kExpertPlaceholder as
/// one path component and `hf_shape` is one expert's shape: the result is the stacked tensor.
/// The steps, in the converter's order: an Embed weight keeps its orientation and is renamed
/// `.embedding`; a LayerNorm weight becomes `.scale`; any other `.weight` becomes `.kernel` with its dims
/// permuted (stacked experts (0,2,1) after stacking; rank 2 (1,0); rank 3 (2,1,0); rank 4 (2,3,1,0);
/// rank 5 (2,3,4,1,0); rank 6 (4,5,3,2,1,0); rank 1 unchanged); everything else is kept. Dots become '/'.
NamedShape HfToEasyDel(std::string_view hf_name, const Shape& hf_shape, TensorKind kind, int64_t experts);

/// EasyDeL -> HF, the converter's inverse (`easydel_to_torch`). With `experts > 0` the stacked tensor
/// is split into one tensor per expert, in expert order. Returns the HF tensors.
std::vector<NamedShape> EasyDelToHf(std::string_view easydel_path, const Shape& shape, int64_t experts);

/// For each dim k of an HF tensor, the dim of its EasyDeL counterpart that dim becomes, by the
/// converter's permutations: `kernel` says the EasyDeL name ends in "kernel" (only kernels are
/// permuted); with `stacked_experts` the EasyDeL tensor is the stack [E, ...] whose dim 0 is the expert.
std::vector<int> HfDimsInEasyDel(int hf_rank, bool kernel, bool stacked_experts);

}  // namespace easyplan::schemas

#endif  // EASYPLAN_SCHEMAS_LAYOUT_CONVERT_H_
