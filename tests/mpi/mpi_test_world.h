#pragma once

#include <string>

#include "cluster/mpi_world.h"

namespace ct::test {
const MpiWorld& World();
// True on every rank iff `ok` on every rank.
bool AllRanksAgree(bool ok);
// Collective: "<temp dir>/ct_mpi_<pid>_<name>", the same on every rank (rank 0's pid), so that
// concurrent test processes never share a file. Creates nothing.
std::string SharedTempPath(const std::string& name);
}  // namespace ct::test
