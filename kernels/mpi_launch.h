#ifndef EASYPLAN_KERNELS_MPI_LAUNCH_H_
#define EASYPLAN_KERNELS_MPI_LAUNCH_H_

// What a launcher tells a process before MPI starts, and how a mesh's devices split over the ranks.
// Open MPI's mpirun sets OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE (and PMIx's PMIX_RANK); MPICH's
// Hydra sets PMI_RANK and PMI_SIZE. Reading them first lets `--engine mpi` outside mpirun say so,
// instead of MPI_Init silently starting a one-process "singleton" run.
//
// Rank r runs devices [r * n/K, (r+1) * n/K) of the mesh's row-major device order (the last axis
// fastest, as jax.make_mesh numbers devices). Those must form a sub-mesh (whole trailing axes times a
// divisor-sized range of the next): then every collective group meets every rank it touches in the
// same number of devices, and the ranks a group spans are one communicator.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/mesh.h"
#include "core/status.h"

namespace easyplan::kernels {

struct MpiLaunch {
  int rank = 0;
  int size = 1;
  std::string launcher;  ///< "Open MPI", "PMIx", "MPICH (Hydra)"
};

/// An environment lookup (std::getenv in the program; a table in tests and the fuzzer).
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

/// The launch, or nullopt when no launcher's variables are set (not under mpirun). BadInput when they
/// are set but are not integers with 0 <= rank < size <= 2^20.
StatusOr<std::optional<MpiLaunch>> ReadMpiLaunch(const EnvLookup& env);

/// The devices one rank runs, and where they sit on each mesh axis.
struct RankBlock {
  int64_t first = 0, count = 0;          ///< devices [first, first + count)
  std::vector<int64_t> axis_lo, axis_n;  ///< per axis: coordinates [lo, lo + n)
};

/// Rank `rank` of `ranks`'s devices of `mesh`. BadInput when `ranks` does not divide the device count,
/// or the blocks are not sub-meshes; the message lists the process counts that work.
StatusOr<RankBlock> RankDevices(const Mesh& mesh, int rank, int ranks);

/// Every process count that splits `mesh` into sub-mesh blocks (ascending).
std::vector<int64_t> ValidProcessCounts(const Mesh& mesh);

}  // namespace easyplan::kernels

#endif  // EASYPLAN_KERNELS_MPI_LAUNCH_H_
