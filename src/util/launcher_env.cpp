#include "util/launcher_env.h"

#include <unistd.h>

#include <cstdlib>
#include <initializer_list>
#include <string>

namespace ct {
namespace {

// The value of the first of `names` that is set to an integer.
std::optional<int> FirstIntegerVariable(std::initializer_list<const char*> names) {
  for (const char* name : names) {
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

}  // namespace

std::optional<int> LauncherRank() {
  // Open MPI's mpirun, PMIx launchers (srun --mpi=pmix), MPICH/Hydra, Slurm.
  return FirstIntegerVariable({"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"});
}

std::optional<int> LauncherLocalRank() {
  return FirstIntegerVariable({"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID"});
}

bool IsLauncherRankZero() { return LauncherRank().value_or(0) == 0; }

std::optional<int> LauncherWorldSize() {
  return FirstIntegerVariable({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"});
}

std::optional<int> SlurmStepCpusPerTask() {
  if (!std::getenv("SLURM_STEP_ID")) return std::nullopt;
  return FirstIntegerVariable({"SLURM_CPUS_PER_TASK"});
}

std::string SingletonError(int mpi_world_size, std::optional<int> launcher_world_size) {
  if (mpi_world_size != 1 || launcher_world_size.value_or(1) <= 1) return "";
  return "the launcher started " + std::to_string(*launcher_world_size) +
         " processes, but MPI sees a world of 1: each process is running alone as a singleton "
         "(and would train its own copy). Under Slurm launch with `srun --mpi=pmix` (`srun --mpi=list` "
         "shows the plugins); with mpirun, use the mpirun of the MPI that clustertrain was built with";
}

std::string ProcessHost() {
  char name[256] = {0};
  gethostname(name, sizeof(name) - 1);
  return name;
}

}  // namespace ct
