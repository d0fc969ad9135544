// Failures that every rank meets alike (a missing dataset, a bad checkpoint) reported once.
#pragma once

#include <functional>

#include "cluster/mpi_world.h"

namespace ct {

// Collective. Runs `body` on every rank. If it throws on any rank, every rank throws a ct::Error
// marked Agreed(), so that the fatal path prints it once, from rank 0: the message, alone when
// every rank met the same one; otherwise one line per distinct message with the ranks and hosts
// that met it ("... (on rank 1 of 4, node2)"). The exit code is the lowest failing rank's.
//
// A failure that only some ranks meet inside a collective part of `body` (one rank cannot read
// its rows) leaves its peers in that collective: the failing rank then waits at most a few
// seconds for them and rethrows its own error unagreed, so the fatal path ends the job with the
// message from that rank. The agreement runs on a communicator of its own, so that it can never
// be matched with the peers' collectives.
void RunAgreed(const MpiWorld& world, const std::function<void()>& body);

}  // namespace ct
