#ifndef EASYPLAN_KERNELS_MPI_ENGINE_H_
#define EASYPLAN_KERNELS_MPI_ENGINE_H_

// The MPI engine: `mpirun -np K easyplan check ... --engine mpi` runs the numeric check as K processes,
// rank r running devices/K simulated devices (kernels/mpi_launch.h says which), with every collective
// an MPI collective on the communicator of its mesh-axis group (one MPI_Comm_split per set of axes).
// Rank 0 is the root: it prints the report.
//
// Nothing waits forever. Every MPI call has a deadline (the root's a little shorter so it is the one to
// report): start-up (MPI_Init, until every rank has started the check) has its own, and every later
// wait has `timeout_seconds`. The collectives are non-blocking and polled against it; a wait that expires
// prints what it waited for and ends the whole job with MPI_Abort(3). The calls that only exist in
// blocking form (MPI_Init, MPI_Comm_split, MPI_Finalize) run under a watchdog thread that prints the
// same message and exits 3, which makes mpirun end the job. A rank that crashes prints which and exits 3.
// The root watches the ranks' processes on its host and, when one ends, names it and exits 3 before
// mpirun's teardown can swallow its output. The test-only variable EASYPLAN_TEST_MPI_STOP (split or
// finalize) stops the last rank with SIGSTOP before that call, and EASYPLAN_TEST_MPI_SLOW_START=SECONDS
// starts it late (docs/CHECK.md).
//
// Built only where Open MPI's development files were found (CMake option EASYPLAN_MPI); elsewhere
// StartMpiEngine says how to get them.

#include <memory>

#include "core/status.h"
#include "kernels/engine.h"

namespace easyplan::kernels {

struct MpiOptions {
  /// Start-up: MPI_Init and every rank reaching the check (--mpi-start-timeout). Apart from `timeout_seconds`,
  /// so a machine slow to start K processes does not spend the deadline of the waits in the check.
  double startup_timeout_seconds = 60;
  double timeout_seconds = 60;  ///< every later wait (--mpi-timeout)
  /// Deliberate faults for the fault tests (docs/CHECK.md), on the last rank at its first collective:
  /// it crashes (SIGSEGV), is killed (SIGKILL, which no handler sees), is sent SIGTERM by a process
  /// other than the launcher (itself, as `kill` or a batch scheduler would), or stops answering.
  enum class Fault { kNone, kCrash, kKill, kTerm, kStall } fault = Fault::kNone;
};

/// True when this build has the MPI engine.
bool MpiAvailable();

/// Starts MPI in a process mpirun launched. BadInput outside mpirun (no launcher variables) or in a
/// build without MPI, saying what to do. The engine ends MPI when destroyed, after a barrier so the
/// root's output is out before any process exits (mpirun stops the job at the first non-zero exit).
StatusOr<std::unique_ptr<Engine>> StartMpiEngine(const MpiOptions& options);

}  // namespace easyplan::kernels

#endif  // EASYPLAN_KERNELS_MPI_ENGINE_H_
