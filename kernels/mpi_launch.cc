#include "kernels/mpi_launch.h"

#include <fmt/format.h>

#include <charconv>

namespace easyplan::kernels {
namespace {

constexpr int64_t kMaxRanks = int64_t{1} << 20;

// A decimal integer in [0, kMaxRanks], the whole text (no sign, spaces or suffix).
std::optional<int64_t> ParseCount(const std::string& text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < 0 || value > kMaxRanks) return std::nullopt;
  return value;
}

// The count of devices per rank that makes every rank's block a sub-mesh: whole trailing axes times a
// divisor of the next one.
bool IsSubMeshBlock(const Mesh& mesh, int64_t per_rank) {
  int64_t rest = per_rank;
  for (size_t k = mesh.shape.size(); k-- > 0 && rest > 1;) {
    const int64_t s = mesh.shape[k];
    if (rest % s != 0) return s % rest == 0;  // a divisor-sized range of this axis
    rest /= s;                                // this axis whole
  }
  return rest == 1;
}

}  // namespace

StatusOr<std::optional<MpiLaunch>> ReadMpiLaunch(const EnvLookup& env) {
  struct Source {
    const char* launcher;
    const char* rank;
    const char* size;
  };
  // PMIx publishes no size variable of its own; Open MPI sets both OMPI_ and PMIX_ names.
  for (const Source& s : {Source{"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                          Source{"MPICH (Hydra)", "PMI_RANK", "PMI_SIZE"}}) {
    const std::optional<std::string> rank = env(s.rank);
    const std::optional<std::string> size = env(s.size);
    if (!rank && !size) continue;
    if (!rank || !size) {
      return Status::BadInput({}, fmt::format("{} launch: {} is set but {} is not", s.launcher, rank ? s.rank : s.size,
                                              rank ? s.size : s.rank));
    }
    const std::optional<int64_t> r = ParseCount(*rank);
    const std::optional<int64_t> n = ParseCount(*size);
    if (!n || *n < 1) {
      return Status::BadInput({}, fmt::format("{} launch: {} is '{}', expected a process count from 1 to {}",
                                              s.launcher, s.size, *size, kMaxRanks));
    }
    if (!r || *r >= *n) {
      return Status::BadInput(
          {}, fmt::format("{} launch: {} is '{}', expected a rank from 0 to {}", s.launcher, s.rank, *rank, *n - 1));
    }
    return std::optional<MpiLaunch>(MpiLaunch{static_cast<int>(*r), static_cast<int>(*n), s.launcher});
  }
  if (env("PMIX_RANK")) {
    return Status::BadInput({}, "a PMIx launch without OMPI_COMM_WORLD_SIZE or PMI_SIZE: the process count is unknown",
                            {"launch with Open MPI's mpirun"});
  }
  return std::optional<MpiLaunch>();
}

std::vector<int64_t> ValidProcessCounts(const Mesh& mesh) {
  const int64_t devices = mesh.NumDevices();
  std::vector<int64_t> counts;
  for (int64_t k = 1; k <= devices; ++k) {
    if (devices % k == 0 && IsSubMeshBlock(mesh, devices / k)) counts.push_back(k);
  }
  return counts;
}

StatusOr<RankBlock> RankDevices(const Mesh& mesh, int rank, int ranks) {
  const int64_t devices = mesh.NumDevices();
  if (ranks < 1 || devices % ranks != 0 || !IsSubMeshBlock(mesh, devices / ranks)) {
    const std::vector<int64_t> valid = ValidProcessCounts(mesh);
    const std::string why =
        ranks >= 1 && devices % ranks == 0
            ? fmt::format("its {} devices per process are not a block of the mesh's axes", devices / ranks)
            : fmt::format("{} does not divide the {} devices", ranks, devices);
    return Status::BadInput({}, fmt::format("mpirun -np {} cannot run mesh {}: {}", ranks, mesh.ToString(), why),
                            {fmt::format("launch with -np one of {}", fmt::join(valid, ", "))});
  }
  EP_CHECK(rank >= 0 && rank < ranks, "rank outside the launch");
  RankBlock block;
  block.count = devices / ranks;
  block.first = block.count * rank;
  // Coordinates of the first device, and how far the block reaches on each axis.
  int64_t rest = block.first, span = block.count;
  block.axis_lo.assign(mesh.shape.size(), 0);
  block.axis_n.assign(mesh.shape.size(), 1);
  for (size_t k = mesh.shape.size(); k-- > 0;) {
    block.axis_lo[k] = rest % mesh.shape[k];
    rest /= mesh.shape[k];
    block.axis_n[k] = std::min(span, mesh.shape[k]);
    span = span > mesh.shape[k] ? span / mesh.shape[k] : 1;
  }
  return block;
}

}  // namespace easyplan::kernels
