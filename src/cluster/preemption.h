// Graceful preemption. SIGTERM and SIGUSR1 (what Slurm sends with --signal, or before a time
// limit) only set a flag; the trainer reduces the flag over all ranks at every step boundary,
// so all ranks stop after the same step, write a checkpoint and exit with kExitPreempted,
// which the sbatch script turns into a requeue. A second signal ends the process at once.
#pragma once

namespace ct {

void InstallPreemptionHandlers();
bool PreemptionRequested();

}  // namespace ct
