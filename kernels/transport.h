#ifndef EASYPLAN_KERNELS_TRANSPORT_H_
#define EASYPLAN_KERNELS_TRANSPORT_H_

// How a collective's data moves between simulated devices. Collectives (kernels/collectives.h) decides
// what moves, changes the specs and keeps the books; a Transport moves the blocks: between the blocks
// of one process (MakeInProcessTransport) or between processes through MPI's collectives
// (kernels/mpi_engine.h). Every call covers each group over `axes` holding a device of this process
// (`local`: one block per device of geo().local_devices(), in device order) and returns the elements per
// device it handed to the engine, S, which Collectives turns into the ring cost it records.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/dist_tensor.h"
#include "kernels/host_tensor.h"

namespace easyplan::kernels {

enum class ReduceOp { kSum, kMax };

class Transport {
 public:
  virtual ~Transport() = default;
  /// The devices this process runs, inside the whole mesh.
  virtual const MeshGeometry& geo() const = 0;
  /// The process that prints the report (the in-process engine's only one; MPI's rank 0).
  virtual bool root() const { return true; }

  /// `what` names the collective for messages ("all-gather over (tp) in layer 0: ...").
  virtual int64_t AllGather(std::vector<HostTensor>& local, const std::vector<int>& axes, int dim,
                            const std::string& what) = 0;
  virtual int64_t AllReduce(std::vector<HostTensor>& local, const std::vector<int>& axes, ReduceOp op,
                            const std::string& what) = 0;
  /// Sums over each group and leaves member i block i of `dim`.
  virtual int64_t ReduceScatter(std::vector<HostTensor>& local, const std::vector<int>& axes, int dim,
                                const std::string& what) = 0;
  /// Member i receives block i of `to` from every member, joined along `from` in member order.
  virtual int64_t AllToAll(std::vector<HostTensor>& local, const std::vector<int>& axes, int from, int to,
                           const std::string& what) = 0;

  // Pipeline stages (kernels/stage_mesh.h, kernels/pipeline_forward.h). Both REQUIRE this transport to
  // be the whole mesh's, not a stage's.
  /// The transport of stage `stage` of the pp axis `pp_axis`: its geo() is the stage's mesh with this
  /// process's devices of it, and its collectives run among the stage's devices. nullptr when this
  /// process runs none of them.
  virtual std::unique_ptr<Transport> Stage(int pp_axis, int64_t stage) = 0;
  /// A stage boundary: device i of stage `from` sends its block to device i of stage `to`. `sent` holds
  /// this process's blocks of stage `from` (in Stage(pp_axis, from)'s order; none when it runs none);
  /// `received` becomes this process's blocks of stage `to`, each of `shape`.
  virtual int64_t SendRecv(const std::vector<HostTensor>& sent, std::vector<HostTensor>& received, const Dims& shape,
                           int pp_axis, int64_t from, int64_t to, const std::string& what) = 0;

  // Probes for the report: never accounted, and not part of the computation being checked. A pipeline
  // stage's transport (Stage) gathers nothing: its processes are not every process, and the root may run
  // none of them; its GatherValues returns this process's values, and GatherBlocks is the whole mesh's.
  /// Every device's block in device order on the root (empty elsewhere). Blocks are equal-shaped.
  virtual std::vector<HostTensor> GatherBlocks(const std::vector<HostTensor>& local) = 0;
  /// Every device's value in device order on the root (empty elsewhere).
  virtual std::vector<int64_t> GatherValues(const std::vector<int64_t>& local) = 0;
};

/// `blocks` (equal shapes) summed or maxed elementwise in order: how either transport reduces the
/// blocks of one process before (or instead of) exchanging them.
HostTensor ReduceBlocks(const std::vector<const HostTensor*>& blocks, ReduceOp op);

/// Every device in this process: `geo` must be whole. Keeps a reference to `geo`.
std::unique_ptr<Transport> MakeInProcessTransport(const MeshGeometry& geo);

}  // namespace easyplan::kernels

#endif  // EASYPLAN_KERNELS_TRANSPORT_H_
