#include "core/shape.h"

#include <fmt/format.h>

#include <limits>
#include <utility>

#include "core/checked_math.h"
#include "core/status.h"

namespace easyplan {

void Shape::Assign(const int64_t* dims, size_t rank) {
  EP_CHECK(rank <= static_cast<size_t>(std::numeric_limits<int>::max()), "shape rank does not fit in an int");
  if (rank <= kInline) {
    heap_.reset();
    std::copy(dims, dims + rank, inline_);
  } else {
    auto heap = std::make_unique<int64_t[]>(rank);  // dims may point into heap_: copy before replacing
    std::copy(dims, dims + rank, heap.get());
    heap_ = std::move(heap);
  }
  rank_ = static_cast<int>(rank);
}

void Shape::Take(Shape& other) noexcept {
  heap_ = std::move(other.heap_);
  std::copy(other.inline_, other.inline_ + kInline, inline_);
  rank_ = std::exchange(other.rank_, 0);
}

std::optional<int64_t> Shape::NumElements() const { return CheckedProduct(dims()); }

Shape Shape::Permuted(std::span<const int> perm) const {
  EP_CHECK(static_cast<int>(perm.size()) == rank_, "permutation rank differs from shape rank");
  std::vector<int64_t> out;
  out.reserve(perm.size());
  for (int axis : perm) {
    EP_CHECK(axis >= 0 && axis < rank_, "permutation names a dim the shape lacks");
    out.push_back(data()[axis]);
  }
  return Shape(out);
}

std::string Shape::ToString() const { return fmt::format("[{}]", fmt::join(dims(), ", ")); }

std::optional<int64_t> ByteSize(int64_t num_elements, int bits) {
  std::optional<int64_t> total_bits = CheckedMul(num_elements, bits);
  if (!total_bits) return std::nullopt;
  return *total_bits / 8 + (*total_bits % 8 != 0 ? 1 : 0);
}

}  // namespace easyplan
