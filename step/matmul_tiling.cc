#include "step/matmul_tiling.h"

#include <fmt/format.h>

#include <algorithm>

namespace easyplan::step {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The tiles of `tile` the output grid of `shape` holds (every batch's).
int64_t GridTiles(const std::array<int64_t, 3>& tile, const MatmulShape& shape) {
  return std::max<int64_t>(1, shape.batch) * CeilDiv(std::max<int64_t>(1, shape.m), tile[0]) *
         CeilDiv(std::max<int64_t>(1, shape.n), tile[1]);
}

}  // namespace

double TileUtilization(const std::array<int64_t, 3>& tile, int64_t units, const MatmulShape& shape, int64_t splits) {
  double used = 1;
  const std::array<int64_t, 3> dims = {shape.m, shape.n, shape.k};
  for (size_t i = 0; i < 3; ++i) {
    const int64_t dim = std::max<int64_t>(1, dims[i]);
    used *= static_cast<double>(dim) / static_cast<double>(CeilDiv(dim, tile[i]) * tile[i]);
  }
  if (units > 0) {
    const int64_t tiles = GridTiles(tile, shape) * std::max<int64_t>(1, splits);
    used *= static_cast<double>(tiles) / static_cast<double>(CeilDiv(tiles, units) * units);
  }
  return used;
}

double ShapeUtilization(const step::MatmulTiling& tiling, const MatmulShape& shape) {
  // The tile with the least waste among those whose grid fills at least one wave of the SMs (cuBLAS
  // takes narrower tiles to cut the quantization, and small ones only while they still fill the GPU);
  // on a tie, the earlier (larger) tile.
  double best = 0;
  bool filled = false;
  for (const std::array<int64_t, 3>& tile : tiling.tiles) {
    if (tiling.units > 0 && GridTiles(tile, shape) < tiling.units) continue;
    filled = true;
    best = std::max(best, TileUtilization(tile, tiling.units, shape));
  }
  if (filled) return best;
  // No tile fills one wave: the library splits k so that the tiles times the splits fill the SMs (the
  // guide: it "can also tile along K" when m and n are small and k is large), with the least waste of
  // any tile. The reduction of the splits' partial sums is not priced.
  for (const std::array<int64_t, 3>& tile : tiling.tiles) {
    const int64_t splits = std::max<int64_t>(1, tiling.units / GridTiles(tile, shape));
    best = std::max(best, TileUtilization(tile, tiling.units, shape, splits));
  }
  return best;
}

double ShapeEfficiency(const step::HardwareProfile& hw, const MatmulShape& shape) {
  if (!hw.matmul_tiling || hw.matmul_tiling->tiles.empty()) return hw.matmul_efficiency;
  const step::MatmulTiling& tiling = *hw.matmul_tiling;
  const MatmulShape measured{1, tiling.measured_at[0], tiling.measured_at[1], tiling.measured_at[2]};
  // The measured efficiency is the most a shape reaches (MAMF is the best of a search over shapes): a
  // shape wasting less than the measured one is not credited more.
  return hw.matmul_efficiency * std::min(1.0, ShapeUtilization(tiling, shape) / ShapeUtilization(tiling, measured));
}

std::string MatmulEfficiencyAssumption(const step::HardwareProfile& hw, bool detailed) {
  if (!hw.matmul_tiling || hw.matmul_tiling->tiles.empty()) {
    return fmt::format("every matmul at {:.3g} of {}'s peak, whatever its shape (the profile has no matmul_tiling)",
                       hw.matmul_efficiency, hw.name);
  }
  const step::MatmulTiling& t = *hw.matmul_tiling;
  if (!detailed) {
    return fmt::format(
        "matmuls at {:.3g} of {}'s peak at the measured shape, less where padding to the tiles{} wastes more "
        "(--verbose: the shape and tiles)",
        hw.matmul_efficiency, hw.name, t.units > 0 ? " or partial waves" : "");
  }
  std::string tiles;
  for (const auto& tile : t.tiles) {
    tiles += (tiles.empty() ? "" : ", ") + fmt::format("{}x{}x{}", tile[0], tile[1], tile[2]);
  }
  return fmt::format(
      "matmuls at {:.3g} of {}'s peak, as measured at {}x{}x{} (m x n x k), and below that where a shape wastes "
      "more in padding its dims to the tiles {}{}",
      hw.matmul_efficiency, hw.name, t.measured_at[0], t.measured_at[1], t.measured_at[2], tiles,
      t.units > 0 ? fmt::format(" and in partial waves over {} SMs", t.units) : std::string());
}

}  // namespace easyplan::step
