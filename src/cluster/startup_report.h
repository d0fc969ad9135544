// Start-up lines from every rank, gathered to rank 0 and printed in rank order.
#pragma once

#include <string>

#include "cluster/mpi_world.h"

namespace ct {

// Collective. Each rank contributes `line`; rank 0 logs all of them in rank order.
void ReportInRankOrder(const MpiWorld& world, const std::string& line);

}  // namespace ct
