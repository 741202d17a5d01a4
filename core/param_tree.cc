#include "core/param_tree.h"

#include "core/checked_math.h"
#include "core/enum_table.h"

namespace easyplan {

namespace {

// The layouts as `--layout` and tree JSON name them.
constexpr EnumName<Layout> kLayoutNames[] = {
    {Layout::kEasyDel, "easydel"},
    {Layout::kHf, "hf"},
};

// The roles as tree JSON writes them.
constexpr EnumName<TensorRole> kTensorRoleNames[] = {
    {TensorRole::kParameter, "parameter"},
    {TensorRole::kBuffer, "buffer"},
    {TensorRole::kScale, "scale"},
};

}  // namespace

std::string_view LayoutName(Layout layout) { return NameOf(kLayoutNames, layout); }

std::optional<Layout> ParseLayout(std::string_view text) { return ParseEnum(kLayoutNames, text); }

std::string_view TensorRoleName(TensorRole role) { return NameOf(kTensorRoleNames, role); }

std::optional<TensorRole> ParseTensorRole(std::string_view text) { return ParseEnum(kTensorRoleNames, text); }

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
