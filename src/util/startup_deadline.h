// The watchdog's clock before MPI starts. The hang watchdog (train/hang_watchdog.h) starts once
// the ranks have met; before that a rank can stop where nothing notices: in MPI_Init, whose
// wire-up waits for every rank (a node whose file system hangs, a rank stopped before it got
// there), or in the first collective. This process-local deadline covers that stretch: started
// before MPI_Init with runtime.watchdog_s, ended when the hang watchdog takes over; when it
// passes, the process says where it was stuck and exits with kExitComm, and the launcher ends
// the other ranks.
#pragma once

namespace ct {

// Starts the clock (0: no deadline). Once per process.
void StartStartupDeadline(double seconds);

// Where start-up is now (a string literal, named in the message). A test may stop this rank on
// entering a phase: CT_TEST_STOP_AT=<phase> and CT_TEST_STOP_RANK=<launcher rank, default 1>.
void StartupPhase(const char* phase);

// Start-up reached its first agreed point: the deadline no longer applies.
void EndStartupDeadline();

}  // namespace ct
