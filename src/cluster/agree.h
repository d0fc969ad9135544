// Failures that every rank meets alike (a missing dataset, a bad checkpoint) reported once.
#pragma once

#include <mpi.h>

#include <functional>

namespace ct {

// Collective. Runs `body` on every rank. If it throws on any rank, every rank throws a ct::Error
// carrying the message and exit code of the lowest failing rank, marked Agreed(), so that the
// fatal path prints it once, from rank 0. `body` must make no collective call after a point
// where it can fail on some ranks only (a peer would wait there while this rank waits here;
// the hang watchdog would end that, but slowly).
void RunAgreed(MPI_Comm comm, const std::function<void()>& body);

}  // namespace ct
