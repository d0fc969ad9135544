#include "cluster/cpu_plan.h"

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "util/error.h"

namespace ct {
namespace {

CpuSet Domain(size_t q, const std::vector<CpuSet>& allowed, const std::vector<CpuSet>& gpu_near) {
  if (q < gpu_near.size() && allowed[q].Intersects(gpu_near[q])) return allowed[q].And(gpu_near[q]);
  return allowed[q];
}

// Splits `domain` into `parts` topology-aware pieces (hwloc_distrib over the restricted tree).
std::vector<CpuSet> Split(const Topology& topology, const CpuSet& domain, int parts) {
  hwloc_topology_t restricted = nullptr;
  if (hwloc_topology_dup(&restricted, topology.get()) != 0) throw Error("hwloc_topology_dup failed");
  std::vector<hwloc_bitmap_t> sets(static_cast<size_t>(parts), nullptr);
  int rc = hwloc_topology_restrict(restricted, domain.get(), 0);
  if (rc == 0) {
    hwloc_obj_t root = hwloc_get_root_obj(restricted);
    rc = hwloc_distrib(restricted, &root, 1, sets.data(), static_cast<unsigned>(parts), INT_MAX, 0);
  }
  std::vector<CpuSet> result;
  for (hwloc_bitmap_t set : sets) {
    if (set) {
      result.emplace_back(set);
      hwloc_bitmap_free(set);
    }
  }
  hwloc_topology_destroy(restricted);
  if (rc != 0 || result.size() != sets.size()) {
    throw Error("hwloc could not split cpus " + domain.List() + " into " + std::to_string(parts) +
                " parts; set runtime.bind=none");
  }
  return result;
}

std::string Plural(int n, const std::string& word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

}  // namespace

CpuSet PlanRankCpus(const Topology& topology, int local_rank, const std::vector<CpuSet>& allowed,
                    const std::vector<CpuSet>& gpu_near) {
  const auto me = static_cast<size_t>(local_rank);
  if (me >= allowed.size()) throw Error("PlanRankCpus: local rank " + std::to_string(local_rank) + " out of range");
  const CpuSet mine = Domain(me, allowed, gpu_near);
  int sharers = 0, position = 0;
  for (size_t q = 0; q < allowed.size(); ++q) {
    if (Domain(q, allowed, gpu_near) == mine) {
      if (q < me) ++position;
      ++sharers;
    }
  }
  if (sharers == 1) return mine;
  return Split(topology, mine, sharers)[static_cast<size_t>(position)];
}

int ThreadsFor(const CoreFacts& facts) {
  if (facts.requested_threads > 0) return facts.requested_threads;
  return std::max(facts.planned_cores, 1);
}

std::vector<std::string> ClampWarnings(const CoreFacts& facts, const std::vector<std::string>& thread_env) {
  std::vector<std::string> warnings;
  if (facts.local_size > facts.cgroup_cores) {
    warnings.push_back(Plural(facts.local_size, "rank") + " on this node share " + Plural(facts.cgroup_cores, "core") +
                       ": less than a core each, so they time-share (an oversubscribed launch) and every step waits "
                       "for the slowest; run at most " +
                       std::to_string(facts.cgroup_cores) + " ranks per node");
  }
  const int fair_share = std::max(facts.node_cores / std::max(facts.local_size, 1), 1);
  if (facts.allowed_cores < fair_share) {
    const std::string clamp = "may use only " + Plural(facts.allowed_cores, "core") + ", less than its share of " +
                              std::to_string(fair_share) + " (" + Plural(facts.node_cores, "core") + " / " +
                              Plural(facts.local_size, "rank") + " on the node): ";
    if (facts.launcher_bound) {
      warnings.push_back(clamp +
                         "the launcher bound it. clustertrain binds itself: launch with "
                         "`mpirun --bind-to none` (launch/mpirun.sh does) or `srun --cpu-bind=none`");
    } else if (facts.slurm_cpus_per_task > facts.allowed_cores) {
      // The job has the cores; the step was not given them (srun without -c since Slurm 22.05).
      warnings.push_back(clamp + "the job asked for --cpus-per-task=" + std::to_string(facts.slurm_cpus_per_task) +
                         " but this srun step got " + Plural(facts.allowed_cores, "core") +
                         ": since Slurm 22.05 srun does not inherit --cpus-per-task. Run `srun "
                         "--cpus-per-task=$SLURM_CPUS_PER_TASK` (slurm/train_step.sh does) or export "
                         "SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK before srun");
    } else {
      warnings.push_back(clamp + "the job's cgroup allows " + Plural(facts.cgroup_cores, "core") +
                         " on this node. Ask Slurm for them with `--cpus-per-task=" + std::to_string(fair_share) +
                         "` (or `--exclusive`)");
    }
  }
  const int threads = ThreadsFor(facts);
  if (threads < facts.planned_cores) {
    warnings.push_back("runtime.threads=" + std::to_string(threads) + " leaves " +
                       Plural(facts.planned_cores - threads, "core") + " of this rank's " +
                       std::to_string(facts.planned_cores) + " idle; set runtime.threads: auto");
  } else if (threads > facts.planned_cores) {
    warnings.push_back("runtime.threads=" + std::to_string(threads) + " exceeds this rank's " +
                       Plural(facts.planned_cores, "core") +
                       ": threads will time-share cores; set "
                       "runtime.threads: auto");
  }
  if (facts.requested_threads == 0) {
    for (const std::string& setting : thread_env) {
      const int value = std::atoi(setting.substr(setting.find('=') + 1).c_str());
      if (value > 0 && value < threads) {
        warnings.push_back(setting + " in the environment would clamp this rank to " + Plural(value, "thread") +
                           "; overridden with " + std::to_string(threads) +
                           " (runtime.threads: auto). Set "
                           "runtime.threads=" +
                           std::to_string(value) + " to keep it");
      }
    }
  }
  return warnings;
}

}  // namespace ct
