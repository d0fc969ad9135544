#include "util/launcher_env.h"

#include <cstdlib>
#include <string>

namespace ct {

std::optional<int> LauncherRank() {
  // Open MPI's mpirun, PMIx launchers (srun --mpi=pmix), MPICH/Hydra, Slurm.
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (const char* value = std::getenv(name)) {
      try {
        return std::stoi(value);
      } catch (const std::exception&) {
        continue;
      }
    }
  }
  return std::nullopt;
}

bool IsLauncherRankZero() { return LauncherRank().value_or(0) == 0; }

}  // namespace ct
