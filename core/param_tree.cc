#include "core/param_tree.h"

#include "core/checked_math.h"

namespace easyplan {

std::string_view LayoutName(Layout layout) { return layout == Layout::kHf ? "hf" : "easydel"; }

std::optional<Layout> ParseLayout(std::string_view text) {
  if (text == "easydel") return Layout::kEasyDel;
  if (text == "hf") return Layout::kHf;
  return std::nullopt;
}

std::string_view TensorRoleName(TensorRole role) {
  switch (role) {
    case TensorRole::kParameter:
      return "parameter";
    case TensorRole::kBuffer:
      return "buffer";
    case TensorRole::kScale:
      return "scale";
  }
  return "parameter";
}

std::optional<TensorRole> ParseTensorRole(std::string_view text) {
  for (TensorRole role : {TensorRole::kParameter, TensorRole::kBuffer, TensorRole::kScale}) {
    if (text == TensorRoleName(role)) return role;
  }
  return std::nullopt;
}

StatusOr<TreeTotals> ParamTree::Totals() const {
  TreeTotals totals;
  for (const TensorEntry& tensor : tensors) {
    std::optional<int64_t> numel = tensor.shape.NumElements();
    std::optional<int64_t> bytes = numel ? ByteSize(*numel, DTypeBits(tensor.dtype)) : std::nullopt;
    std::optional<int64_t> sum_bytes = bytes ? CheckedAdd(totals.bytes, *bytes) : std::nullopt;
    std::optional<int64_t> sum_params = tensor.role == TensorRole::kParameter && numel
                                            ? CheckedAdd(totals.params, *numel)
                                            : std::optional<int64_t>(totals.params);
    if (!sum_bytes || !sum_params) {
      return Status::BadInput(
          {}, "tensor '" + tensor.name + "' with shape " + tensor.shape.ToString() + " overflows a 64-bit byte count");
    }
    totals.bytes = *sum_bytes;
    totals.params = *sum_params;
    ++totals.tensors;
  }
  return totals;
}

}  // namespace easyplan
