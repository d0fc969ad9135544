// What the launcher (mpirun, srun) told this process through the environment, readable before
// MPI starts. Used to print start-up errors (bad flags, bad config) from one rank only.
#pragma once

#include <optional>

namespace ct {

// The world rank the launcher assigned, if any launcher variable is set.
std::optional<int> LauncherRank();

// True for the process that should print errors found before MPI starts: rank 0, or a
// process that no launcher started.
bool IsLauncherRankZero();

}  // namespace ct
