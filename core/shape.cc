#include "core/shape.h"

#include <fmt/format.h>

#include "core/checked_math.h"
#include "core/status.h"

namespace easyplan {

std::optional<int64_t> Shape::NumElements() const { return CheckedProduct(dims_); }

Shape Shape::Permuted(std::span<const int> perm) const {
  EP_CHECK(perm.size() == dims_.size(), "permutation rank differs from shape rank");
  std::vector<int64_t> out;
  out.reserve(dims_.size());
  for (int axis : perm) out.push_back(dims_.at(static_cast<size_t>(axis)));
  return Shape(std::move(out));
}

std::string Shape::ToString() const { return fmt::format("[{}]", fmt::join(dims_, ", ")); }

std::optional<int64_t> ByteSize(int64_t num_elements, int bits) {
  std::optional<int64_t> total_bits = CheckedMul(num_elements, bits);
  if (!total_bits) return std::nullopt;
  return *total_bits / 8 + (*total_bits % 8 != 0 ? 1 : 0);
}

}  // namespace easyplan
