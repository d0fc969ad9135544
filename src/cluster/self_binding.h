// Binds this rank to its cores with hwloc and sizes LibTorch's thread pools to them, before
// any pool starts (cpu_plan.h has the policy). Collective over the ranks of a node.
#pragma once

#include <c10/core/Device.h>

#include <string>
#include <vector>

#include "cluster/mpi_world.h"
#include "util/config.h"

namespace ct {

struct RankBinding {
  std::string allowed_cpus;  // what the cgroup and launcher allow this process
  std::string cpus;          // the cores it uses: bound to them with runtime.bind=auto
  bool bound = false;        // hwloc_set_cpubind applied
  int threads = 1;           // LibTorch intra-op threads
  std::string gpu_near;      // "GPU 0000:17:00.0 near cpus 0-15", or "" without one
  std::vector<std::string> warnings;
};

// gpu_bus_ids[q]: the PCI bus id of local rank q's GPU (cluster/gpu_assignment.h); empty on CPU.
RankBinding BindThisRank(const RuntimeConfig& runtime, const MpiWorld& world,
                         const std::vector<std::string>& gpu_bus_ids);

// Collective: every rank's host, rank, local rank, device, cpus and threads, printed by rank 0
// in rank order, then each distinct warning once with the ranks it concerns.
void ReportBindings(const MpiWorld& world, const RankBinding& binding, const std::string& device);

}  // namespace ct
