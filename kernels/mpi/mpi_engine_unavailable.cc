// The MPI engine in a build without MPI (EASYPLAN_MPI=OFF, or no Open MPI development files found).
#include "kernels/mpi_engine.h"

namespace easyplan::kernels {

bool MpiAvailable() { return false; }

StatusOr<std::unique_ptr<Engine>> StartMpiEngine(const MpiOptions& /*options*/) {
  return Status::BadInput({}, "--engine mpi: this easyplan was built without MPI",
                          {"install Open MPI (apt-get install openmpi-bin libopenmpi-dev) and rebuild; "
                           "scripts/easyplan and scripts/test install it"});
}

}  // namespace easyplan::kernels
