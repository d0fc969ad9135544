// Environment variables that clamp a rank's threads before main() runs.
//
// OpenMP runtimes read their affinity variables when the library loads: with
// GOMP_CPU_AFFINITY=0, libgomp pins the main thread and every OpenMP thread it starts to CPU 0
// whatever the process is bound to later (measured here: 1 CPU per thread). Binding after the
// fact cannot undo that, so with runtime.bind=auto clustertrain re-executes itself once, before
// MPI starts, without those variables and bound to every core its cgroup allows (the runtime
// has already moved it, so the launcher's mask cannot be recovered), and reports what it removed.
//
// Thread-count variables (OMP_NUM_THREADS=1, as some launchers set) are not removed: LibTorch's
// set_num_threads overrides them, and the start-up report says so.
#pragma once

#include <string>
#include <vector>

namespace ct {

// "NAME=value" for each OpenMP affinity variable set: OMP_PROC_BIND, OMP_PLACES,
// GOMP_CPU_AFFINITY, KMP_AFFINITY.
std::vector<std::string> OpenMpAffinitySettings();

// Re-executes this program (/proc/self/exe with argv) with those variables unset, noting them
// in CT_REMOVED_OMP_AFFINITY. Does nothing when there are none or this is the re-executed
// process; returns (and leaves them) only if exec fails.
void ReexecWithoutOpenMpAffinity(char** argv);

// What a re-exec removed ("" when nothing): for the start-up report.
std::string RemovedOpenMpAffinity();

// "NAME=value" for each thread-count variable set: OMP_NUM_THREADS, MKL_NUM_THREADS,
// OPENBLAS_NUM_THREADS.
std::vector<std::string> ThreadCountSettings();

}  // namespace ct
