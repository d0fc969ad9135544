#pragma once

#include "cluster/mpi_world.h"

namespace ct::test {
const MpiWorld& World();
// True on every rank iff `ok` on every rank.
bool AllRanksAgree(bool ok);
}  // namespace ct::test
