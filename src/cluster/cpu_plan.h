// Which cores each rank on a node uses, and how many threads it runs: pure policy, unit tested
// on synthetic hwloc topologies (self_binding.cpp applies it to the real process).
//
// Policy, step by step, for local rank r:
//   1. its domain is the cores next to its GPU (the GPU's non-I/O ancestor in hwloc), within
//      what the cgroup and the launcher allow it; without a GPU, or when none of those cores
//      is allowed, the domain is everything it is allowed;
//   2. the local ranks whose domains are the same set share it: hwloc_distrib splits it into
//      that many parts, following the topology (packages, NUMA nodes, caches, cores), and r
//      takes the part of its position among them;
//   3. it runs one intra-op thread per core of its part (runtime.threads overrides).
// So one rank per node gets every core, four ranks on a four-GPU node get the cores of their
// own GPU's socket, and a rank the launcher pinned to one core stays there (and is warned).
#pragma once

#include <string>
#include <vector>

#include "cluster/hwloc_handles.h"

namespace ct {

// allowed[q]: the PUs local rank q may use (cgroup and launcher binding), for every q.
// gpu_near[q]: the PUs next to local rank q's GPU; empty (or an empty set) without one.
CpuSet PlanRankCpus(const Topology& topology, int local_rank, const std::vector<CpuSet>& allowed,
                    const std::vector<CpuSet>& gpu_near);

// What a rank knows about its cores, for the thread count and the clamp warnings.
struct CoreFacts {
  int node_cores = 1;           // physical cores on the node
  int cgroup_cores = 1;         // cores the job's cgroup allows on the node
  int allowed_cores = 1;        // cores this process may use (cgroup and launcher binding)
  bool launcher_bound = false;  // the launcher bound this process to less than the cgroup allows
  int local_size = 1;           // ranks on this node
  int planned_cores = 1;        // cores in this rank's planned set
  int requested_threads = 0;    // runtime.threads; 0 = auto
  int slurm_cpus_per_task = 0;  // SLURM_CPUS_PER_TASK inside an srun step; 0 = none
};

int ThreadsFor(const CoreFacts& facts);

// One warning per problem that keeps this rank from its cores: what, why and how to fix it.
// `thread_env` lists thread-count variables (e.g. "OMP_NUM_THREADS=1") found in the environment.
std::vector<std::string> ClampWarnings(const CoreFacts& facts, const std::vector<std::string>& thread_env);

}  // namespace ct
