// Strings of any length from every rank of a communicator (start-up lines, cpu lists), or from
// one rank to all (what rank 0 alone read).
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace ct {

// Collective. Every rank gets every rank's `mine`, in rank order.
std::vector<std::string> AllGatherStrings(MPI_Comm comm, const std::string& mine);

// Collective. Rank `root` gets every rank's `mine` in rank order; the others get {}.
std::vector<std::string> GatherStrings(MPI_Comm comm, const std::string& mine, int root);

// Collective. Every rank gets rank `root`'s `text`.
std::string BroadcastString(MPI_Comm comm, const std::string& text, int root);

}  // namespace ct
