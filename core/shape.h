#ifndef EASYPLAN_CORE_SHAPE_H_
#define EASYPLAN_CORE_SHAPE_H_

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace easyplan {

/// A tensor's dimensions, outermost first. A value type: rank 0 is a scalar (one element).
/// Dimensions are int64 and never negative; products go through checked arithmetic, so a shape read
/// from a file can never produce a wrong element count.
class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) { Assign(dims.begin(), dims.size()); }
  explicit Shape(std::span<const int64_t> dims) { Assign(dims.data(), dims.size()); }
  explicit Shape(const std::vector<int64_t>& dims) { Assign(dims.data(), dims.size()); }
  Shape(const Shape& other) { Assign(other.data(), static_cast<size_t>(other.rank_)); }
  Shape& operator=(const Shape& other) {
    if (this != &other) Assign(other.data(), static_cast<size_t>(other.rank_));
    return *this;
  }
  Shape(Shape&& other) noexcept { Take(other); }
  Shape& operator=(Shape&& other) noexcept {
    if (this != &other) Take(other);
    return *this;
  }
  ~Shape() = default;

  int rank() const { return rank_; }
  int64_t operator[](int axis) const { return data()[axis]; }
  std::span<const int64_t> dims() const { return {data(), static_cast<size_t>(rank_)}; }

  /// Product of the dims (1 for rank 0), or nullopt on int64 overflow.
  std::optional<int64_t> NumElements() const;

  /// The dims reordered so that result[k] = dims[perm[k]]. REQUIRES: perm is a permutation of rank.
  Shape Permuted(std::span<const int> perm) const;

  /// "[4096, 128256]" (and "[]" for a scalar).
  std::string ToString() const;

  friend bool operator==(const Shape& a, const Shape& b) {
    const std::span<const int64_t> x = a.dims(), y = b.dims();
    return std::equal(x.begin(), x.end(), y.begin(), y.end());
  }

 private:
  // Up to kInline dims live in the object: a tree of 92k tensors (rank 1 to 3) makes no allocation
  // for its shapes. Larger ranks go to the heap.
  static constexpr int kInline = 4;

  const int64_t* data() const { return heap_ ? heap_.get() : inline_; }
  void Assign(const int64_t* dims, size_t rank);
  void Take(Shape& other) noexcept;

  int64_t inline_[kInline] = {};
  std::unique_ptr<int64_t[]> heap_;
  int rank_ = 0;
};

/// Bytes of `num_elements` elements of `bits` bits each (sub-byte types round up to whole bytes), or
/// nullopt on overflow.
std::optional<int64_t> ByteSize(int64_t num_elements, int bits);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_SHAPE_H_
