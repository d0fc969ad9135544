// Failures that every rank meets alike (a missing dataset, a bad checkpoint) reported once.
#pragma once

#include <functional>

#include "cluster/mpi_world.h"

namespace ct {

// Collective. Runs `body` on every rank. If it throws on any rank, every rank throws a ct::Error
// carrying the message and exit code of the lowest failing rank, marked Agreed(), so that the
// fatal path prints it once, from rank 0.
//
// A failure that only some ranks meet inside a collective part of `body` (one rank cannot read
// its rows) leaves its peers in that collective: the failing rank then waits at most a few
// seconds for them and rethrows its own error unagreed, so the fatal path ends the job with the
// message from that rank. The agreement runs on a communicator of its own, so that it can never
// be matched with the peers' collectives.
void RunAgreed(const MpiWorld& world, const std::function<void()>& body);

}  // namespace ct
