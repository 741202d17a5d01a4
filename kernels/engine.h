#ifndef EASYPLAN_KERNELS_ENGINE_H_
#define EASYPLAN_KERNELS_ENGINE_H_

// Where the numeric check's simulated devices run. The in-process engine runs every device in this
// process; the MPI engine (kernels/mpi_engine.h) runs the same SPMD program as `mpirun -np K` processes,
// each with a contiguous block of devices/K devices, and moves data through MPI's collectives. Every
// process computes the same program; the root prints the report.

#include <memory>
#include <string_view>

#include "core/mesh.h"
#include "core/status.h"
#include "kernels/transport.h"

namespace easyplan::kernels {

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string_view name() const = 0;  ///< "in-process", "mpi"
  /// Whether devices run in other processes too (their outputs are then checked against an in-process
  /// rerun of the same shards).
  virtual bool distributed() const { return false; }
  virtual int processes() const { return 1; }
  virtual bool root() const { return true; }
  /// This process's devices of `mesh`, connected to the other processes'. BadInput when the mesh cannot
  /// be split evenly over the processes.
  virtual StatusOr<std::unique_ptr<Transport>> Connect(const Mesh& mesh) = 0;
  /// This process's exit code once the root has one: the root's code on the root, 0 on the others.
  /// Open MPI's mpirun aborts the whole job as soon as any process exits non-zero (mpirun(1), "Exit
  /// status"), which could cut off the root's report still in flight; with only the root non-zero,
  /// mpirun exits with the root's code after the report is out.
  virtual int AgreeExitCode(int root_code) { return root_code; }
};

/// Every device in this process.
std::unique_ptr<Engine> MakeInProcessEngine();

/// A transport for every device of `mesh` in this process that owns its geometry.
std::unique_ptr<Transport> MakeInProcessTransport(const Mesh& mesh);

}  // namespace easyplan::kernels

#endif  // EASYPLAN_KERNELS_ENGINE_H_
