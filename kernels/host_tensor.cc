#include "kernels/host_tensor.h"

#include "core/status.h"

namespace easyplan::kernels {

int64_t NumElements(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

HostTensor::HostTensor(Dims dims, double fill) : shape(std::move(dims)) {
  data.assign(static_cast<size_t>(NumElements(shape)), fill);
}

HostTensor HostTensor::Meta(Dims dims) {
  HostTensor t;
  t.shape = std::move(dims);
  t.meta = true;
  return t;
}

Dims HostTensor::Strides() const {
  Dims strides(shape.size(), 1);
  for (size_t k = shape.size(); k-- > 1;) strides[k - 1] = strides[k] * shape[k];
  return strides;
}

Dims HostTensor::Unravel(int64_t flat) const {
  Dims index(shape.size(), 0);
  for (size_t k = shape.size(); k-- > 0;) {
    index[k] = flat % shape[k];
    flat /= shape[k];
  }
  return index;
}

namespace {

// Calls f(src_offset, dst_offset, run) for each contiguous innermost run of the box `ranges` of a
// tensor with `shape`, dst being the box itself in row-major order.
template <typename F>
void ForEachRun(const Dims& shape, const std::vector<Range>& ranges, F f) {
  const size_t rank = shape.size();
  if (rank == 0) {
    f(0, 0, 1);
    return;
  }
  Dims strides(rank, 1);
  for (size_t k = rank; k-- > 1;) strides[k - 1] = strides[k] * shape[k];
  Dims extent(rank);
  for (size_t k = 0; k < rank; ++k) {
    extent[k] = ranges[k].second - ranges[k].first;
    if (extent[k] <= 0) return;
  }
  const int64_t run = extent[rank - 1];
  Dims index(rank, 0);  // position inside the box, last dim fixed at 0
  int64_t dst = 0;
  while (true) {
    int64_t src = 0;
    for (size_t k = 0; k < rank; ++k) src += (ranges[k].first + index[k]) * strides[k];
    f(src, dst, run);
    dst += run;
    size_t k = rank - 1;
    while (k-- > 0) {
      if (++index[k] < extent[k]) break;
      index[k] = 0;
    }
    if (k == static_cast<size_t>(-1)) return;
  }
}

}  // namespace

HostTensor SliceDim(const HostTensor& t, int dim, int64_t start, int64_t length) {
  std::vector<Range> box;
  for (int64_t s : t.shape) box.emplace_back(0, s);
  box[static_cast<size_t>(dim)] = {start, start + length};
  return SliceBox(t, box);
}

HostTensor SliceBox(const HostTensor& t, const std::vector<Range>& ranges) {
  EP_CHECK(ranges.size() == t.shape.size(), "slice rank");
  Dims dims;
  for (const Range& r : ranges) dims.push_back(r.second - r.first);
  if (t.meta) return HostTensor::Meta(std::move(dims));
  HostTensor out(dims);
  ForEachRun(t.shape, ranges, [&](int64_t src, int64_t dst, int64_t run) {
    for (int64_t i = 0; i < run; ++i) out.data[static_cast<size_t>(dst + i)] = t.data[static_cast<size_t>(src + i)];
  });
  return out;
}

void PasteBox(HostTensor* dst, const Dims& starts, const HostTensor& src) {
  if (dst->meta || src.meta) {
    dst->data.clear();
    dst->meta = true;
    return;
  }
  std::vector<Range> ranges;
  for (size_t k = 0; k < starts.size(); ++k) ranges.emplace_back(starts[k], starts[k] + src.shape[k]);
  ForEachRun(dst->shape, ranges, [&](int64_t at, int64_t from, int64_t run) {
    for (int64_t i = 0; i < run; ++i) dst->data[static_cast<size_t>(at + i)] = src.data[static_cast<size_t>(from + i)];
  });
}

HostTensor Concat(const std::vector<const HostTensor*>& parts, int dim) {
  EP_CHECK(!parts.empty(), "concat of nothing");
  Dims dims = parts[0]->shape;
  dims[static_cast<size_t>(dim)] = 0;
  bool meta = false;
  for (const HostTensor* p : parts) {
    dims[static_cast<size_t>(dim)] += p->shape[static_cast<size_t>(dim)];
    meta = meta || p->meta;
  }
  if (meta) return HostTensor::Meta(std::move(dims));
  HostTensor out(dims);
  Dims starts(dims.size(), 0);
  for (const HostTensor* p : parts) {
    PasteBox(&out, starts, *p);
    starts[static_cast<size_t>(dim)] += p->shape[static_cast<size_t>(dim)];
  }
  return out;
}

HostTensor Transpose(const HostTensor& t, const std::vector<int>& perm) {
  const size_t rank = t.shape.size();
  Dims dims(rank);
  for (size_t k = 0; k < rank; ++k) dims[k] = t.shape[static_cast<size_t>(perm[k])];
  if (t.meta) return HostTensor::Meta(std::move(dims));
  HostTensor out(dims);
  const Dims in_strides = t.Strides();
  Dims strides(rank);  // the input stride of each output dim
  for (size_t k = 0; k < rank; ++k) strides[k] = in_strides[static_cast<size_t>(perm[k])];
  if (rank == 0) return t;
  // An odometer over the output's index, last dim fastest.
  Dims index(rank, 0);
  for (int64_t flat = 0; flat < out.size(); ++flat) {
    int64_t src = 0;
    for (size_t k = 0; k < rank; ++k) src += index[k] * strides[k];
    out.data[static_cast<size_t>(flat)] = t.data[static_cast<size_t>(src)];
    for (size_t k = rank; k > 0; --k) {
      if (++index[k - 1] < dims[k - 1]) break;
      index[k - 1] = 0;
    }
  }
  return out;
}

std::vector<int> FreeDims(int rank, const std::vector<int>& used) {
  std::vector<int> free;
  for (int d = 0; d < rank; ++d) {
    bool in = false;
    for (int u : used) in = in || u == d;
    if (!in) free.push_back(d);
  }
  return free;
}

int64_t DotFlops(const HostTensor& lhs, const DotDims& dims, const HostTensor& out) {
  int64_t k = 1;
  for (int d : dims.lhs_contract) k *= lhs.shape[static_cast<size_t>(d)];
  return 2 * NumElements(out.shape) * k;
}

HostTensor Dot(const HostTensor& lhs, const HostTensor& rhs, const DotDims& dims) {
  EP_CHECK(dims.lhs_batch.size() == dims.rhs_batch.size() && dims.lhs_contract.size() == dims.rhs_contract.size(),
           "dot dims");
  std::vector<int> lhs_used = dims.lhs_batch, rhs_used = dims.rhs_batch;
  lhs_used.insert(lhs_used.end(), dims.lhs_contract.begin(), dims.lhs_contract.end());
  rhs_used.insert(rhs_used.end(), dims.rhs_contract.begin(), dims.rhs_contract.end());
  const std::vector<int> lhs_free = FreeDims(lhs.rank(), lhs_used);
  const std::vector<int> rhs_free = FreeDims(rhs.rank(), rhs_used);
  int64_t nb = 1, m = 1, n = 1, k = 1;
  Dims out_dims;
  for (size_t i = 0; i < dims.lhs_batch.size(); ++i) {
    const int64_t size = lhs.shape[static_cast<size_t>(dims.lhs_batch[i])];
    EP_CHECK(size == rhs.shape[static_cast<size_t>(dims.rhs_batch[i])], "dot batch sizes differ");
    nb *= size;
    out_dims.push_back(size);
  }
  for (int d : lhs_free) {
    m *= lhs.shape[static_cast<size_t>(d)];
    out_dims.push_back(lhs.shape[static_cast<size_t>(d)]);
  }
  for (int d : rhs_free) {
    n *= rhs.shape[static_cast<size_t>(d)];
    out_dims.push_back(rhs.shape[static_cast<size_t>(d)]);
  }
  for (size_t i = 0; i < dims.lhs_contract.size(); ++i) {
    const int64_t size = lhs.shape[static_cast<size_t>(dims.lhs_contract[i])];
    EP_CHECK(size == rhs.shape[static_cast<size_t>(dims.rhs_contract[i])], "dot contracting sizes differ");
    k *= size;
  }
  if (lhs.meta || rhs.meta) return HostTensor::Meta(std::move(out_dims));
  // [batch, free, contract] x [batch, contract, free] as contiguous matrices.
  std::vector<int> lp = dims.lhs_batch;
  lp.insert(lp.end(), lhs_free.begin(), lhs_free.end());
  lp.insert(lp.end(), dims.lhs_contract.begin(), dims.lhs_contract.end());
  std::vector<int> rp = dims.rhs_batch;
  rp.insert(rp.end(), dims.rhs_contract.begin(), dims.rhs_contract.end());
  rp.insert(rp.end(), rhs_free.begin(), rhs_free.end());
  const HostTensor a = Transpose(lhs, lp);
  const HostTensor b = Transpose(rhs, rp);
  HostTensor out(out_dims);
  std::vector<double> row(static_cast<size_t>(n));
  for (int64_t bi = 0; bi < nb; ++bi) {
    const double* pa = a.data.data() + bi * m * k;
    const double* pb = b.data.data() + bi * k * n;
    double* po = out.data.data() + bi * m * n;
    for (int64_t i = 0; i < m; ++i) {
      std::fill(row.begin(), row.end(), 0.0);
      for (int64_t c = 0; c < k; ++c) {
        const double av = pa[i * k + c];
        const double* pbr = pb + c * n;
        for (int64_t j = 0; j < n; ++j) row[static_cast<size_t>(j)] += av * pbr[j];
      }
      for (int64_t j = 0; j < n; ++j) po[i * n + j] = row[static_cast<size_t>(j)];
    }
  }
  return out;
}

}  // namespace easyplan::kernels
