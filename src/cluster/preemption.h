// Graceful preemption. SIGTERM and SIGUSR1 (what Slurm sends with --signal, or before a time
// limit) only set a flag; the trainer reduces the flag over all ranks at every step boundary,
// so all ranks stop after the same step, write a checkpoint and exit with kExitPreempted,
// which the sbatch script turns into a requeue. SIGINT (Ctrl-C on a run in a terminal) stops the
// same way but exits kExitInterrupted and asks for no requeue; where SIGINT is ignored (a job
// started in the background of a script) it stays ignored. A second signal ends the process at
// once, until every rank has agreed to stop (then further ones are ignored: see
// IgnoreFurtherPreemptionSignals).
#pragma once

#include <cstdint>

namespace ct {

void InstallPreemptionHandlers();  // SIGTERM, SIGUSR1: training, from its start
// SIGINT: training only, which checks the flag at every step; every other command ends at a
// Ctrl-C as programs do.
void InstallInterruptHandler();
bool PreemptionRequested();  // any stop signal
bool InterruptRequested();   // SIGINT among them

// Once every rank has agreed to stop for preemption: further SIGTERM, SIGUSR1 and SIGINT are ignored,
// so that each rank exits with kExitPreempted by itself. Without this, the first rank to exit
// 75 makes srun --kill-on-bad-exit (or mpirun) SIGTERM the others, which then die by that
// signal (143) and the job step does not report the preemption, however fast the machine.
void IgnoreFurtherPreemptionSignals();

// For tests of preemption on machines of any speed: the global step named by the environment
// variable CT_TEST_HOLD_AT_STEP (> 0), or -1 when it is unset. The trainer waits at that step,
// beating its watchdog, until a preemption signal arrives, so that the signal lands at a known
// step however fast the machine trains. A bad value is a ConfigError.
int64_t TestHoldStep();

}  // namespace ct
