// Zeroed float32 buffers that every rank of a communicator maps at once: one POSIX shared-memory
// segment (/dev/shm) per call, so that the ranks of a node can keep one copy of state they would
// otherwise each hold and copy between them (an optimizer split over the node's ranks updates
// its part in place and the others see it, with no all-gather).
//
// The segment's name is unlinked as soon as every rank has mapped it, so nothing is left in
// /dev/shm whatever happens next; each rank unmaps its mapping alone when the last tensor on it
// is freed (no collective on the error path). A name left by a creator that died before that
// (a rank failing during start-up) is removed by the next job's first rank on the node. The free
// space of /dev/shm is checked and the pages reserved up front: a tmpfs too small for the buffers
// (Docker's 64 MiB default) would otherwise end a rank with SIGBUS on first touch, not with an
// error.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "comm/communicator.h"

namespace ct {

// Collective over `comm`, whose ranks must share one host. Returns one zero 1-d float32 CPU
// tensor of numels[i] elements per entry, the same memory on every rank, or none on any rank
// (with the reason on every rank) where a rank cannot map them. Never throws for the segment's
// own failures, so that no rank leaves the collective early.
NodeSharedBuffers MapNodeSharedZeros(MPI_Comm comm, const std::vector<int64_t>& numels);

}  // namespace ct
