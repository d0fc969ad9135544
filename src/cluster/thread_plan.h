// How many intra-op threads this rank runs, and on which cores.
//
// The skeleton's policy: a rank the launcher bound to a core set uses all of those cores; an
// unbound rank takes its even share of the node's cores. This removes LibTorch's default of
// one thread. (hwloc self-binding to GPU-local cores builds on this.)
#pragma once

#include <string>

namespace ct {

struct ThreadPlan {
  std::string allowed_cpus;  // hwloc list syntax, e.g. "0-1"
  int allowed_cores = 1;     // physical cores in the allowed set
  int node_cores = 1;        // physical cores on the node
  int threads = 1;           // intra-op threads to use
  std::string reason;        // one line: why this many
};

// Pure policy, unit tested: requested 0 means auto.
int AutoThreads(int allowed_cores, int node_cores, int local_size, bool bound_by_launcher);

// Reads the topology and this process's CPU binding with hwloc.
ThreadPlan PlanThreads(int requested_threads, int local_size);

// Applies the plan to LibTorch (and thereby OpenMP/OpenBLAS).
void ApplyThreadPlan(const ThreadPlan& plan);

}  // namespace ct
