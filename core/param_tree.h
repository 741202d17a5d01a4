#ifndef EASYPLAN_CORE_PARAM_TREE_H_
#define EASYPLAN_CORE_PARAM_TREE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/status.h"

namespace easyplan {

/// The two naming dialects of one model's tensors:
///  - kHf: HuggingFace checkpoint names ("model.layers.0.mlp.down_proj.weight"), torch layout (Linear
///    weights [out, in]), one tensor per expert;
///  - kEasyDel: EasyDeL/flax parameter paths ("model/layers/0/mlp/down_proj/kernel"), kernels [in, out],
///    experts stacked [E, in, out].
enum class Layout { kEasyDel, kHf };

std::string_view LayoutName(Layout layout);  // "easydel" | "hf"
std::optional<Layout> ParseLayout(std::string_view text);

/// What a stored tensor is. Only kParameter counts towards a model's parameter total; buffers
/// (rotary inv_freq, causal-mask tables, router correction biases registered as buffers) and FP8 block
/// scales are stored in checkpoints but are not trainable parameters.
enum class TensorRole { kParameter, kBuffer, kScale };

std::string_view TensorRoleName(TensorRole role);                  // "parameter" | "buffer" | "scale"
std::optional<TensorRole> ParseTensorRole(std::string_view text);  // the inverse; nullopt otherwise

/// One tensor of a parameter tree.
struct TensorEntry {
  std::string name;
  Shape shape;
  DType dtype = DType::kFloat32;
  TensorRole role = TensorRole::kParameter;

  friend bool operator==(const TensorEntry&, const TensorEntry&) = default;
};

/// Sums over a tree; every sum is overflow-checked when computed.
struct TreeTotals {
  int64_t tensors = 0;
  int64_t params = 0;  ///< elements of kParameter tensors
  int64_t bytes = 0;   ///< bytes of every tensor, buffers and scales included (a checkpoint's total_size)
};

/// A model's tensors in one layout, in a stable order (the order of the template or the file).
struct ParamTree {
  std::string model_type;
  Layout layout = Layout::kEasyDel;
  std::vector<TensorEntry> tensors;

  /// Totals, or a BadInput error naming the first tensor whose size overflows int64.
  StatusOr<TreeTotals> Totals() const;
};

}  // namespace easyplan

#endif  // EASYPLAN_CORE_PARAM_TREE_H_
