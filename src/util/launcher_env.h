// What the launcher (mpirun, srun) told this process through the environment, readable before
// MPI starts. Used to print start-up errors (bad flags, bad config) from one rank only.
#pragma once

#include <optional>
#include <string>

namespace ct {

// This machine's host name, for messages printed before MPI starts.
std::string ProcessHost();

// The world rank the launcher assigned, if any launcher variable is set.
std::optional<int> LauncherRank();

// The rank among the launcher's processes on this node, if it says: OMPI_COMM_WORLD_LOCAL_RANK
// (mpirun), SLURM_LOCALID (srun), MPI_LOCALRANKID (Hydra).
std::optional<int> LauncherLocalRank();

// True for the process that should print errors found before MPI starts: rank 0, or a
// process that no launcher started.
bool IsLauncherRankZero();

// The number of processes the launcher says it started in this job step, if it says:
// OMPI_COMM_WORLD_SIZE (mpirun), PMI_SIZE (Hydra, some PMI), SLURM_STEP_NUM_TASKS (inside an
// srun step; SLURM_NTASKS is not used because a batch script sees it outside any srun).
std::optional<int> LauncherWorldSize();

// Inside an srun step (SLURM_STEP_ID set): the --cpus-per-task the step sees in
// SLURM_CPUS_PER_TASK. A step started without -c still sees the job's value there (the batch
// script's environment), though since Slurm 22.05 the step itself is not given that many.
std::optional<int> SlurmStepCpusPerTask();

// "" when MPI's world size agrees with the launcher; else the error to report. Pure: unit tested.
std::string SingletonError(int mpi_world_size, std::optional<int> launcher_world_size);

}  // namespace ct
