#ifndef EASYPLAN_CORE_SHAPE_H_
#define EASYPLAN_CORE_SHAPE_H_

#include <cstdint>
#include <initializer_list>
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
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t operator[](int axis) const { return dims_[static_cast<size_t>(axis)]; }
  std::span<const int64_t> dims() const { return dims_; }

  /// Product of the dims (1 for rank 0), or nullopt on int64 overflow.
  std::optional<int64_t> NumElements() const;

  /// The dims reordered so that result[k] = dims[perm[k]]. REQUIRES: perm is a permutation of rank.
  Shape Permuted(std::span<const int> perm) const;

  /// "[4096, 128256]" (and "[]" for a scalar).
  std::string ToString() const;

  friend bool operator==(const Shape&, const Shape&) = default;

 private:
  std::vector<int64_t> dims_;
};

/// Bytes of `num_elements` elements of `bits` bits each (sub-byte types round up to whole bytes), or
/// nullopt on overflow.
std::optional<int64_t> ByteSize(int64_t num_elements, int bits);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_SHAPE_H_
