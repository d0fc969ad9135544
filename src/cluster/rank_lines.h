// A start-up line that may differ between ranks (a node whose /dev/shm is too small for the split
// Adam, nodes of another CPU or GPU kind in one job): logged once when every rank agrees, else
// once per distinct value with the ranks and hosts that have it.
#pragma once

#include <string>
#include <vector>

#include "cluster/mpi_world.h"

namespace ct {

// "0-3,5" for sorted ranks.
std::string RankRanges(const std::vector<int>& ranks);

// lines[r] and hosts[r] are rank r's; an empty line is nothing to say. {lines[0]} when every
// rank has the same line; else one entry per distinct non-empty line, in the order of its first
// rank: "ranks 2-3 (node-b): line". At most 4 hosts are named.
std::vector<std::string> LinesByRanks(const std::vector<std::string>& lines, const std::vector<std::string>& hosts);

enum class LineLevel { kInfo, kWarning };

// Collective over the world. Rank 0 logs LinesByRanks of every rank's `line` at `level`.
void LogLinePerRanks(const MpiWorld& world, const std::string& line, LineLevel level = LineLevel::kInfo);

}  // namespace ct
