// A start-up line that may differ between ranks (on which node a fallback was taken): logged
// once when every rank agrees, else once per distinct value with the ranks and hosts that have it.
#pragma once

#include <string>
#include <vector>

#include "cluster/mpi_world.h"

namespace ct {

// "0-3,5" for sorted ranks.
std::string RankRanges(const std::vector<int>& ranks);

// lines[r] and hosts[r] are rank r's. {lines[0]} when all are equal; else one entry per distinct
// line, in the order of its first rank: "ranks 2-3 (node-b): line". At most 4 hosts are named.
std::vector<std::string> LinesByRanks(const std::vector<std::string>& lines, const std::vector<std::string>& hosts);

// Collective over the world. Rank 0 logs "<what>: <line>" for LinesByRanks of every rank's `line`.
void LogLinePerRanks(const MpiWorld& world, const std::string& what, const std::string& line);

}  // namespace ct
