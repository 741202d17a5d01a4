#include "step/torus.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>
#include <utility>

namespace easyplan::step {
namespace {

using Assignment = std::vector<std::vector<int64_t>>;  // [dim][mesh axis]

bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// The side of the cube a v4/v5p slice must be made of to have wraparound ("How to Scale Your Model",
// tpus/: "reconfigurable cubes of 4x4x4 chips connected by optical wraparound links").
constexpr int64_t kCube = 4;

std::vector<bool> Wraps(const LinkDomain& fast, const std::vector<int64_t>& dims) {
  std::vector<bool> wraps(dims.size(), false);
  if (fast.wraparound == "full_cubes") {
    // tpus/: "Any multiple of a full cube (e.g. 4x4x4 or 4x4x8) will have wraparounds"; "a 2x2x4 won't".
    const bool cubes = std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d >= kCube && d % kCube == 0; });
    std::fill(wraps.begin(), wraps.end(), cubes);
  } else if (fast.wraparound == "full_dims") {
    // tpus/: v5e and v6e have no wraps "on dims <16", the torus's length: a dim wraps when it is as long.
    for (size_t i = 0; i < dims.size() && i < fast.torus.size(); ++i) wraps[i] = dims[i] == fast.torus[i];
  }
  return wraps;
}

std::vector<int64_t> PrimeFactors(int64_t x) {
  std::vector<int64_t> factors;
  for (int64_t p = 2; p * p <= x; ++p) {
    while (x % p == 0) {
      factors.push_back(p);
      x /= p;
    }
  }
  if (x > 1) factors.push_back(x);
  return factors;
}

// The most even factorization of `chips` into `rank` dims that fit `torus` (sorted alike), preferring
// dims that are whole cubes when `cubes`; empty when none fits.
std::vector<int64_t> EvenestFit(int64_t chips, const std::vector<int64_t>& torus, bool cubes) {
  std::vector<int64_t> bound = torus;
  std::sort(bound.begin(), bound.end());
  std::vector<int64_t> best;
  std::tuple<bool, int64_t, int64_t> best_key{};
  std::vector<int64_t> divisors, large;  // of chips, ascending (O(sqrt(chips)) to list)
  for (int64_t d = 1; d * d <= chips; ++d) {
    if (chips % d != 0) continue;
    divisors.push_back(d);
    if (d * d != chips) large.push_back(chips / d);
  }
  divisors.insert(divisors.end(), large.rbegin(), large.rend());
  std::vector<int64_t> dims(bound.size(), 1);
  auto visit = [&](auto&& self, size_t i, int64_t left) -> void {
    if (i + 1 == dims.size()) {
      dims[i] = left;
      std::vector<int64_t> sorted = dims;
      std::sort(sorted.begin(), sorted.end());
      for (size_t k = 0; k < sorted.size(); ++k) {
        if (sorted[k] > bound[k]) return;
      }
      const bool whole = std::all_of(sorted.begin(), sorted.end(), [](int64_t d) { return d % kCube == 0; });
      const auto key =
          std::make_tuple(!(cubes && whole), sorted.back(), std::accumulate(sorted.begin(), sorted.end(), int64_t{0}));
      if (best.empty() || key < best_key) {
        best = sorted;
        best_key = key;
      }
      return;
    }
    for (int64_t d : divisors) {
      if (d > left) break;
      if (left % d != 0) continue;
      dims[i] = d;
      self(self, i + 1, left / d);
    }
  };
  if (!dims.empty()) visit(visit, 0, chips);
  return best;
}

// jax's `_create_device_mesh_for_nd_torus`: from the most network-intensive (last) axis down, each axis
// takes the first combination of unassigned whole dims, more dims first, whose product is its size.
std::optional<Assignment> AssignWholeDims(const std::vector<int64_t>& dims, const std::vector<int64_t>& axes) {
  Assignment assignment(dims.size(), std::vector<int64_t>(axes.size(), 1));
  std::vector<int64_t> free = dims;
  for (size_t l = axes.size(); l-- > 0;) {
    if (axes[l] == 1) continue;
    bool placed = false;
    for (size_t count = dims.size(); count >= 1 && !placed; --count) {
      // itertools.combinations order over the dim indices.
      std::vector<size_t> pick(count);
      std::iota(pick.begin(), pick.end(), size_t{0});
      while (true) {
        int64_t product = 1;
        for (size_t p : pick) product *= free[p];
        if (product == axes[l]) {
          for (size_t p : pick) {
            assignment[p][l] = dims[p];
            free[p] = 0;
          }
          placed = true;
          break;
        }
        // Next combination.
        size_t i = count;
        while (i-- > 0 && pick[i] == i + dims.size() - count) {
        }
        if (i == static_cast<size_t>(-1)) break;
        ++pick[i];
        for (size_t j = i + 1; j < count; ++j) pick[j] = pick[j - 1] + 1;
      }
    }
    if (!placed) return std::nullopt;
  }
  return assignment;
}

// jax's `_prefer_first_logical_axis_assignment`: whole dims first (their product, then their count),
// then the dims higher-intensity axes already use, then the larger vector.
bool Prefer(const std::vector<int64_t>& x, const std::vector<int64_t>& y, const std::vector<int64_t>& dims,
            const std::vector<int64_t>& used) {
  auto whole = [&](const std::vector<int64_t>& v) {
    int64_t product = 1, count = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] == dims[i]) {
        product *= v[i];
        if (v[i] > 1) ++count;
      }
    }
    return std::make_pair(product, count);
  };
  auto overlapping = [&](const std::vector<int64_t>& v) {
    int64_t product = 1;
    for (size_t i = 0; i < v.size(); ++i) {
      if (used[i] > 1) product *= v[i];
    }
    return product;
  };
  if (whole(x).first != whole(y).first) return whole(x).first > whole(y).first;
  if (whole(x).second != whole(y).second) return whole(x).second > whole(y).second;
  if (overlapping(x) != overlapping(y)) return overlapping(x) > overlapping(y);
  return x > y;
}

// jax's `_create_device_mesh_for_nd_torus_splitting_axes`: each axis, last first, takes the preferred of
// the ways its prime factors can be spread over what the dims have left.
std::optional<Assignment> AssignSplittingDims(const std::vector<int64_t>& dims, const std::vector<int64_t>& axes) {
  Assignment assignment(dims.size(), std::vector<int64_t>(axes.size(), 1));
  for (size_t l = axes.size(); l-- > 0;) {
    if (axes[l] == 1) continue;  // takes no dim
    std::vector<int64_t> used(dims.size(), 1), left(dims.size());
    for (size_t p = 0; p < dims.size(); ++p) {
      for (int64_t s : assignment[p]) used[p] *= s;
      left[p] = dims[p] / used[p];
    }
    std::map<int64_t, int> need;  // prime -> multiplicity in the axis size
    for (int64_t f : PrimeFactors(axes[l])) ++need[f];
    std::vector<std::pair<int64_t, int>> primes(need.begin(), need.end());
    std::optional<std::vector<int64_t>> best;
    std::vector<int64_t> z(dims.size(), 1);
    // Every way to spread each prime's multiplicity over the dims that still have that prime.
    auto spread = [&](auto&& self, size_t k, size_t p, int remaining) -> void {
      if (k == primes.size()) {
        if (!best || Prefer(z, *best, dims, used)) best = z;
        return;
      }
      const int64_t f = primes[k].first;
      if (p == dims.size()) {
        if (remaining == 0) self(self, k + 1, 0, k + 1 < primes.size() ? primes[k + 1].second : 0);
        return;
      }
      int capacity = 0;
      for (int64_t rest = left[p]; rest % f == 0; rest /= f) ++capacity;
      for (int take = 0; take <= std::min(capacity, remaining); ++take) {
        int64_t factor = 1;
        for (int t = 0; t < take; ++t) factor *= f;
        z[p] *= factor;
        self(self, k, p + 1, remaining - take);
        z[p] /= factor;
      }
    };
    if (!primes.empty()) spread(spread, 0, 0, primes[0].second);
    if (!best) return std::nullopt;
    for (size_t p = 0; p < dims.size(); ++p) assignment[p][l] = (*best)[p];
  }
  return assignment;
}

}  // namespace

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string text;
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "x" : "") + std::to_string(dims[i]);
  return text;
}

std::vector<int64_t> SliceDims(const LinkDomain& fast, int64_t chips, bool* assumed) {
  *assumed = false;
  const size_t rank = fast.torus.size();
  if (rank == 0) return {chips};
  // The whole torus is a topology of its own (v5p's largest slice, 16x16x24).
  if (chips == std::accumulate(fast.torus.begin(), fast.torus.end(), int64_t{1}, std::multiplies<>())) {
    return fast.torus;
  }
  std::vector<int64_t> sorted_torus = fast.torus;
  std::sort(sorted_torus.begin(), sorted_torus.end());
  // Cloud TPU's topologies: 3D slices from 2x2x1 (a host), 2D from 1x1, the smallest dim doubled (the last
  // of equals) each time the chips double.
  const int64_t smallest = rank == 3 ? 4 : 1;
  if (IsPowerOfTwo(chips) && chips >= smallest) {
    std::vector<int64_t> dims(rank, 1);
    if (rank == 3) dims = {2, 2, 1};
    int64_t product = std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
    while (product < chips) {
      size_t at = 0;
      for (size_t i = 0; i < rank; ++i) {
        if (dims[i] <= dims[at]) at = i;
      }
      dims[at] *= 2;
      product *= 2;
    }
    std::vector<int64_t> sorted = dims;
    std::sort(sorted.begin(), sorted.end());
    bool fits = true;
    for (size_t k = 0; k < rank; ++k) fits = fits && sorted[k] <= sorted_torus[k];
    if (fits) {
      // 2x2x1 is written largest first; the rest ascend.
      if (rank == 3 && chips == 4) return dims;
      return sorted;
    }
  }
  *assumed = true;
  std::vector<int64_t> dims = EvenestFit(chips, fast.torus, fast.wraparound == "full_cubes");
  if (dims.empty()) {  // more chips than the torus holds: one long dim
    dims.assign(rank, 1);
    dims.back() = chips;
  }
  return dims;
}

StatusOr<TorusSlice> LayOutSlice(const HardwareProfile& hw, const std::vector<int64_t>& ici_shape,
                                 const std::vector<int64_t>& given) {
  TorusSlice slice;
  const int64_t chips = std::accumulate(ici_shape.begin(), ici_shape.end(), int64_t{1}, std::multiplies<>());
  if (!given.empty()) {
    const int64_t product = std::accumulate(given.begin(), given.end(), int64_t{1}, std::multiplies<>());
    if (product != chips || given.size() != hw.fast.torus.size()) {
      return Status::BadInput({}, "--torus " + DimsText(given) + ": expected " + std::to_string(hw.fast.torus.size()) +
                                      " dims of " + hw.name + "'s torus multiplying to the slice's " +
                                      std::to_string(chips) + " chips, found " + std::to_string(given.size()) +
                                      " dims multiplying to " + std::to_string(product));
    }
    slice.dims = given;
    slice.shape_given = true;
  } else {
    slice.dims = SliceDims(hw.fast, chips, &slice.shape_assumed);
  }
  slice.wraps = Wraps(hw.fast, slice.dims);
  // jax's `_v5e_create_device_mesh` (TPU v5 lite, v6 lite): a 2x2 or 2x4 slice, and a 4x4 one whose mesh
  // has one axis of all 16 chips, are put in the order of a closed ring of ICI links.
  if (hw.fast.wraparound == "full_dims" && slice.dims.size() == 2 && !slice.shape_given) {
    const int64_t largest = ici_shape.empty() ? 1 : *std::max_element(ici_shape.begin(), ici_shape.end());
    slice.ring_order = chips == 4 || chips == 8 || (chips == 16 && largest == 16);
  }
  if (std::optional<Assignment> whole = AssignWholeDims(slice.dims, ici_shape)) {
    slice.assignment = std::move(*whole);
  } else if (std::optional<Assignment> split = AssignSplittingDims(slice.dims, ici_shape)) {
    slice.assignment = std::move(*split);
  } else {
    // No assignment: each axis is taken on a single dim of its own size, without wraparound.
    slice.layout_assumed = true;
    slice.assignment.assign(slice.dims.size(), std::vector<int64_t>(ici_shape.size(), 1));
    for (size_t l = 0; l < ici_shape.size(); ++l) slice.assignment[0][l] = ici_shape[l];
  }
  return slice;
}

TorusSpan SpanOf(const TorusSlice& slice, const std::vector<int>& axes) {
  TorusSpan span;
  if (slice.ring_order) {
    // One ring in mesh order: a group of the whole slice closes it; a smaller one is a line on it.
    int64_t group = 1, chips = 1;
    for (int a : axes) {
      for (const std::vector<int64_t>& dim : slice.assignment) group *= dim[static_cast<size_t>(a)];
    }
    for (int64_t d : slice.dims) chips *= d;
    if (group <= 1) return span;
    span.dims = 1;
    const bool closed = group == chips;
    span.bandwidth_factor = closed ? 1.0 : 0.5;
    span.hops = closed ? group / 2 : group - 1;
    return span;
  }
  double slowest = 1;
  for (size_t p = 0; p < slice.dims.size(); ++p) {
    int64_t along = 1;
    for (int a : axes) along *= slice.assignment[p][static_cast<size_t>(a)];
    if (along <= 1) continue;
    ++span.dims;
    // A ring over the whole dim closes through its wraparound; a part of a dim (or a dim without one) is
    // a line, whose ring sends one way around.
    const bool wraps = !slice.layout_assumed && slice.wraps[p] && along == slice.dims[p];
    slowest = std::min(slowest, wraps ? 1.0 : 0.5);
    span.hops += wraps ? along / 2 : along - 1;
  }
  span.bandwidth_factor = span.dims > 0 ? static_cast<double>(span.dims) * slowest : 1;
  return span;
}

}  // namespace easyplan::step
