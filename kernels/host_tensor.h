#ifndef EASYPLAN_KERNELS_HOST_TENSOR_H_
#define EASYPLAN_KERNELS_HOST_TENSOR_H_

// A dense row-major tensor of doubles in host memory, and the exact reference ops the executor runs on
// each simulated device: slicing, concatenation, transposition, a general dot with f64 accumulation
// and elementwise maps. Plain loops, no tricks: these are the ground truth.

#include <cstdint>
#include <utility>
#include <vector>

namespace easyplan::kernels {

using Dims = std::vector<int64_t>;
using Range = std::pair<int64_t, int64_t>;  ///< [start, stop) along one dim

/// Elements of a shape (1 for rank 0). REQUIRES: dims non-negative, product fits int64 (callers size
/// tensors through the numeric check's memory cap).
int64_t NumElements(const Dims& dims);

struct HostTensor {
  Dims shape;
  std::vector<double> data;
  /// Shape only, no values: a dry run (kernels/dry_run.h) executes the same ops on full-size models to
  /// count their collectives and FLOPs without holding a byte of them. Every op on a meta operand
  /// returns a meta result of the right shape and computes nothing.
  bool meta = false;

  HostTensor() = default;
  explicit HostTensor(Dims dims, double fill = 0.0);
  /// A shape-only tensor.
  static HostTensor Meta(Dims dims);
  int rank() const { return static_cast<int>(shape.size()); }
  int64_t size() const { return meta ? NumElements(shape) : static_cast<int64_t>(data.size()); }
  /// Row-major strides.
  Dims Strides() const;
  /// The multi-index of flat position `flat`.
  Dims Unravel(int64_t flat) const;
};

/// The box `ranges` (one per dim) of `t`.
HostTensor SliceBox(const HostTensor& t, const std::vector<Range>& ranges);
/// [start, start + length) of `dim`, every other dim whole.
HostTensor SliceDim(const HostTensor& t, int dim, int64_t start, int64_t length);
/// Writes `src` into the box of `dst` starting at `starts`.
void PasteBox(HostTensor* dst, const Dims& starts, const HostTensor& src);
/// Concatenation along `dim`; REQUIRES: equal shapes except along dim.
HostTensor Concat(const std::vector<const HostTensor*>& parts, int dim);
/// result.shape[k] = t.shape[perm[k]].
HostTensor Transpose(const HostTensor& t, const std::vector<int>& perm);

/// Which dims of two operands a dot pairs up (XLA DotGeneral): the result's dims are the batch dims,
/// then lhs's free dims, then rhs's free dims, each in operand order.
struct DotDims {
  std::vector<int> lhs_batch, rhs_batch;
  std::vector<int> lhs_contract, rhs_contract;
};
HostTensor Dot(const HostTensor& lhs, const HostTensor& rhs, const DotDims& dims);
/// The multiply-adds of that dot, counted as 2 FLOPs each: 2 x elements(out) x contracted size.
int64_t DotFlops(const HostTensor& lhs, const DotDims& dims, const HostTensor& out);

/// The dims of `rank` not in `used`, in order.
std::vector<int> FreeDims(int rank, const std::vector<int>& used);

}  // namespace easyplan::kernels

#endif  // EASYPLAN_KERNELS_HOST_TENSOR_H_
