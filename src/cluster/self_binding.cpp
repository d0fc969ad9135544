#include "cluster/self_binding.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <cerrno>
#include <cstring>
#include <map>

#include <unistd.h>

#include "cluster/cpu_plan.h"
#include "cluster/gather_strings.h"
#include "cluster/openmp_env.h"
#include "cluster/rank_lines.h"
#include "util/launcher_env.h"
#include "util/logging.h"

namespace ct {
namespace {

// For every local rank q, the PUs next to its GPU; an empty set where hwloc cannot place the
// GPU (no PCI information, or a build without the CUDA runtime).
std::vector<CpuSet> GpuLocality(const Topology& topology, int local_size, const std::vector<std::string>& bus_ids) {
  std::vector<CpuSet> near(static_cast<size_t>(local_size));
  for (size_t q = 0; q < bus_ids.size() && q < near.size(); ++q) {
    hwloc_obj_t pci = hwloc_get_pcidev_by_busidstring(topology.get(), bus_ids[q].c_str());
    hwloc_obj_t ancestor = pci ? hwloc_get_non_io_ancestor_obj(topology.get(), pci) : nullptr;
    if (ancestor && ancestor->cpuset) near[q] = CpuSet(ancestor->cpuset);
  }
  return near;
}

// The CPU arithmetic settings and LibTorch's thread pools, before any pool starts (so that every
// thread inherits them): a warning in `binding` for what could not be applied.
void StartThreadPools(const RuntimeConfig& runtime, RankBinding& binding) {
  // Subnormal floats (|x| < 1.2e-38) take a slow path through the CPU's microcode: once a VAE's
  // weights and Adam moments hold such tiny values, the demo's step runs 1.6x slower (epoch 10
  // on). Flushing them to zero costs nothing and changes losses in the last digits only. The
  // setting is per thread (MXCSR): set here, before any pool starts, every thread inherits it.
  if (runtime.flush_denormal && !at::globalContext().setFlushDenormal(true)) {
    binding.warnings.push_back("runtime.flush_denormal: this CPU cannot flush subnormal floats to zero");
  }
  // Before the first parallel region, so the pools start with these sizes on these cores.
  at::set_num_threads(binding.threads);
  if (runtime.interop_threads > 0) {
    try {
      at::set_num_interop_threads(static_cast<int>(runtime.interop_threads));
    } catch (const std::exception& e) {
      binding.warnings.push_back("runtime.interop_threads not applied: the inter-op pool had started");
    }
  }
}

}  // namespace

RankBinding BindThisRank(const RuntimeConfig& runtime, const MpiWorld& world,
                         const std::vector<std::string>& gpu_bus_ids) {
  RankBinding binding;
  const bool gpu = !gpu_bus_ids.empty();
  const Topology topology = Topology::ThisMachine(/*with_pci=*/gpu);
  const CpuSet cgroup = topology.AllowedPus();
  CpuSet current;
  if (hwloc_get_cpubind(topology.get(), current.get(), HWLOC_CPUBIND_PROCESS) != 0) current = cgroup;
  CpuSet allowed = current.And(cgroup);
  if (allowed.Empty()) allowed = cgroup;
  binding.allowed_cpus = allowed.List();

  std::vector<CpuSet> allowed_by_rank;
  for (const std::string& list : AllGatherStrings(world.LocalComm(), allowed.List())) {
    allowed_by_rank.push_back(CpuSet::FromList(list));
  }
  const std::vector<CpuSet> gpu_near = GpuLocality(topology, world.LocalSize(), gpu_bus_ids);
  const CpuSet& my_gpu_near = gpu_near[static_cast<size_t>(world.LocalRank())];
  if (gpu) {
    binding.gpu_near = "GPU " + gpu_bus_ids[static_cast<size_t>(world.LocalRank())] + " near cpus " +
                       (my_gpu_near.Empty() ? std::string("unknown") : my_gpu_near.List());
  }
  const CpuSet planned = PlanRankCpus(topology, world.LocalRank(), allowed_by_rank, gpu_near);
  binding.cpus = planned.List();

  CoreFacts facts;
  facts.node_cores = topology.CountCores(topology.AllPus());
  facts.cgroup_cores = topology.CountCores(cgroup);
  facts.allowed_cores = topology.CountCores(allowed);
  facts.launcher_bound = !(allowed == cgroup);
  facts.local_size = world.LocalSize();
  facts.planned_cores = topology.CountCores(planned);
  facts.requested_threads = static_cast<int>(runtime.threads);
  facts.slurm_cpus_per_task = SlurmStepCpusPerTask().value_or(0);
  binding.threads = ThreadsFor(facts);
  binding.warnings = ClampWarnings(facts, ThreadCountSettings());
  if (gpu && my_gpu_near.Empty()) {
    binding.warnings.push_back(
        "hwloc cannot place this rank's GPU on the PCI tree (no PCI information?): "
        "bound to a share of the node instead of the GPU's socket");
  }

  const std::optional<int> launcher_local = LauncherLocalRank();
  if (launcher_local && *launcher_local != world.LocalRank()) {
    binding.warnings.push_back("the launcher numbers this process " + std::to_string(*launcher_local) +
                               " on its node but MPI's shared-memory split numbers it " +
                               std::to_string(world.LocalRank()) + "; devices and cores follow MPI's numbering");
  }
  const std::string removed = RemovedOpenMpAffinity();
  if (!removed.empty()) {
    binding.warnings.push_back("removed " + removed +
                               " from the environment (they pin every OpenMP thread when "
                               "the library loads, against this binding); runtime.bind=none keeps them");
  } else if (runtime.bind == Binding::kAuto && !OpenMpAffinitySettings().empty()) {
    binding.warnings.push_back(
        "OpenMP affinity variables are set and could not be removed; unset them before "
        "launching");
  }

  if (runtime.bind == Binding::kAuto) {
    binding.bound = hwloc_set_cpubind(topology.get(), planned.get(), HWLOC_CPUBIND_PROCESS) == 0;
    if (!binding.bound) {
      binding.warnings.push_back("hwloc could not bind to cpus " + binding.cpus + " (" + std::strerror(errno) +
                                 "); running unbound with " + std::to_string(binding.threads) + " threads");
    }
  }
  StartThreadPools(runtime, binding);
  return binding;
}

void ReportBindings(const MpiWorld& world, const RankBinding& binding, const std::string& device) {
  std::string record = world.Host() + "  rank " + std::to_string(world.Rank()) + "/" + std::to_string(world.Size()) +
                       "  local " + std::to_string(world.LocalRank()) + "/" + std::to_string(world.LocalSize()) + "  " +
                       device + "  allowed " + binding.allowed_cpus + "  " +
                       (binding.bound ? "bound " : "unbound, share ") + binding.cpus + "  threads " +
                       std::to_string(binding.threads) + (binding.gpu_near.empty() ? "" : "  " + binding.gpu_near) +
                       "  pid " + std::to_string(::getpid());
  for (const std::string& warning : binding.warnings) record += "\n" + warning;
  const std::vector<std::string> records = GatherStrings(world.Comm(), record, 0);
  if (world.Rank() != 0) return;
  spdlog::info("ranks (host, rank, local rank, device, allowed cpus, cpus used, threads, pid):");
  std::map<std::string, std::vector<int>> warned;  // warning -> ranks, so 1,000 ranks warn once
  for (int r = 0; r < static_cast<int>(records.size()); ++r) {
    const std::string& text = records[static_cast<size_t>(r)];
    size_t end = text.find('\n');
    spdlog::info("  {}", text.substr(0, end));
    while (end != std::string::npos) {
      const size_t next = text.find('\n', end + 1);
      warned[text.substr(end + 1, next == std::string::npos ? std::string::npos : next - end - 1)].push_back(r);
      end = next;
    }
  }
  for (const auto& [warning, ranks] : warned) spdlog::warn("rank {}: {}", RankRanges(ranks), warning);
}

}  // namespace ct
