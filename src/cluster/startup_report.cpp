#include "cluster/startup_report.h"

#include <vector>

#include "cluster/mpi_check.h"
#include "util/logging.h"

namespace ct {

void ReportInRankOrder(const MpiWorld& world, const std::string& line) {
  int length = static_cast<int>(line.size());
  std::vector<int> lengths(world.Size());
  MPI_CHECK(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, world.Comm()));
  std::vector<int> offsets(world.Size(), 0);
  int total = 0;
  for (int r = 0; r < world.Size(); ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::vector<char> all(world.Rank() == 0 ? std::max(total, 1) : 1);
  MPI_CHECK(MPI_Gatherv(line.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                        MPI_CHAR, 0, world.Comm()));
  if (world.Rank() != 0) return;
  for (int r = 0; r < world.Size(); ++r) {
    spdlog::info("  {}", std::string(all.data() + offsets[r], static_cast<size_t>(lengths[r])));
  }
}

}  // namespace ct
