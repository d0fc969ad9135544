// Self-binding policy on synthetic machines: 2 packages x 2 NUMA nodes x 8 cores x 2 PUs
// (32 cores, 64 PUs), with GPUs near NUMA nodes, and with masks a launcher or cgroup imposes.
#include <gtest/gtest.h>

#include "cluster/cpu_plan.h"

namespace ct {
namespace {

const char* kMachine = "pack:2 numa:2 core:8 pu:2";

class CpuPlan : public ::testing::Test {
 protected:
  Topology topology_ = Topology::Synthetic(kMachine);

  CpuSet Numa(unsigned index) const {
    return CpuSet(hwloc_get_obj_by_type(topology_.get(), HWLOC_OBJ_NUMANODE, index)->cpuset);
  }
  std::vector<CpuSet> Plan(const std::vector<CpuSet>& allowed, const std::vector<CpuSet>& gpu_near) const {
    std::vector<CpuSet> sets;
    for (int r = 0; r < static_cast<int>(allowed.size()); ++r)
      sets.push_back(PlanRankCpus(topology_, r, allowed, gpu_near));
    return sets;
  }
  // The sets are pairwise disjoint, whole cores, and cover `expected_union`.
  void ExpectPartition(const std::vector<CpuSet>& sets, const CpuSet& expected_union) const {
    CpuSet all;
    for (size_t a = 0; a < sets.size(); ++a) {
      EXPECT_FALSE(sets[a].Empty()) << "rank " << a;
      EXPECT_EQ(topology_.CountCores(sets[a]) * 2, hwloc_bitmap_weight(sets[a].get()))
          << "rank " << a << " got part of a core: " << sets[a].List();
      for (size_t b = a + 1; b < sets.size(); ++b) {
        EXPECT_FALSE(sets[a].Intersects(sets[b])) << sets[a].List() << " and " << sets[b].List();
      }
      hwloc_bitmap_or(all.get(), all.get(), sets[a].get());
    }
    EXPECT_EQ(all.List(), expected_union.List());
  }
};

TEST_F(CpuPlan, WithoutGpusTheNodeIsSplitEvenlyAlongTheTopology) {
  for (int ranks : {1, 2, 4, 8}) {
    SCOPED_TRACE(ranks);
    const std::vector<CpuSet> sets = Plan(std::vector<CpuSet>(ranks, topology_.AllPus()), {});
    ExpectPartition(sets, topology_.AllPus());
    for (const CpuSet& set : sets) EXPECT_EQ(topology_.CountCores(set), 32 / ranks);
    if (ranks == 2) {
      EXPECT_EQ(sets[1].List(), "32-63");  // one package each
    }
    if (ranks == 4) {
      for (unsigned n = 0; n < 4; ++n) EXPECT_EQ(sets[n], Numa(n));  // one NUMA node each
    }
  }
}

TEST_F(CpuPlan, RanksGetTheCoresNextToTheirGpu) {
  // Four GPUs, GPU g next to NUMA node g, but listed in another order than the ranks.
  const std::vector<CpuSet> gpu_near = {Numa(2), Numa(3), Numa(0), Numa(1)};
  std::vector<CpuSet> sets = Plan(std::vector<CpuSet>(4, topology_.AllPus()), gpu_near);
  for (size_t r = 0; r < 4; ++r) EXPECT_EQ(sets[r], gpu_near[r]) << "rank " << r;

  // Eight ranks on four GPUs (GPU r % 4): two ranks share a GPU and split its NUMA node.
  std::vector<CpuSet> near8;
  for (size_t r = 0; r < 8; ++r) near8.push_back(gpu_near[r % 4]);
  sets = Plan(std::vector<CpuSet>(8, topology_.AllPus()), near8);
  ExpectPartition(sets, topology_.AllPus());
  for (size_t r = 0; r < 8; ++r) {
    EXPECT_TRUE(near8[r].Includes(sets[r])) << "rank " << r << ": " << sets[r].List();
    EXPECT_EQ(topology_.CountCores(sets[r]), 4);
  }

  // Two GPUs on package 0 only, one rank each: each takes its NUMA node, package 1 stays idle.
  sets = Plan(std::vector<CpuSet>(2, topology_.AllPus()), {Numa(0), Numa(1)});
  EXPECT_EQ(sets[0], Numa(0));
  EXPECT_EQ(sets[1], Numa(1));

  // One GPU for the node near package 0 (both NUMA nodes), two ranks: 8 cores each, package 0.
  CpuSet package0 = CpuSet(hwloc_get_obj_by_type(topology_.get(), HWLOC_OBJ_PACKAGE, 0)->cpuset);
  sets = Plan(std::vector<CpuSet>(2, topology_.AllPus()), {package0, package0});
  ExpectPartition(sets, package0);
}

TEST_F(CpuPlan, BindingStaysInsideTheAllowedMask) {
  // A cgroup that allows cores 0-11 (PUs 0-23) of the node to the job, shared by 3 ranks.
  const CpuSet allowed = CpuSet::FromList("0-23");
  std::vector<CpuSet> sets = Plan(std::vector<CpuSet>(3, allowed), {});
  ExpectPartition(sets, allowed);
  for (const CpuSet& set : sets) EXPECT_EQ(topology_.CountCores(set), 4);

  // GPU near NUMA node 1 (PUs 16-31), partly allowed: only the allowed part, 16-23.
  sets = Plan({allowed}, {Numa(1)});
  EXPECT_EQ(sets[0].List(), "16-23");

  // GPU near NUMA node 3, not allowed at all: fall back to the whole mask.
  sets = Plan({allowed}, {Numa(3)});
  EXPECT_EQ(sets[0], allowed);

  // A launcher that bound each rank to its own core: each rank keeps exactly that core.
  sets = Plan({CpuSet::FromList("0-1"), CpuSet::FromList("2-3")}, {});
  EXPECT_EQ(sets[0].List(), "0-1");
  EXPECT_EQ(sets[1].List(), "2-3");
}

TEST(ThreadCount, OneThreadPerCoreUnlessConfigured) {
  CoreFacts facts;
  facts.node_cores = facts.cgroup_cores = facts.allowed_cores = facts.planned_cores = 2;
  EXPECT_EQ(ThreadsFor(facts), 2);  // LibTorch's default here is 1: not kept
  facts.requested_threads = 1;
  EXPECT_EQ(ThreadsFor(facts), 1);
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const auto& line : lines) all += line + "\n";
  return all;
}

TEST(ClampWarnings, NameTheCauseAndTheFix) {
  CoreFacts fine;
  fine.node_cores = fine.cgroup_cores = fine.allowed_cores = 32;
  fine.local_size = 4;
  fine.planned_cores = 8;
  EXPECT_TRUE(ClampWarnings(fine, {}).empty());

  CoreFacts pinned = fine;  // mpirun's default --bind-to core
  pinned.allowed_cores = pinned.planned_cores = 1;
  pinned.launcher_bound = true;
  std::string text = Joined(ClampWarnings(pinned, {}));
  EXPECT_NE(text.find("only 1 core, less than its share of 8"), std::string::npos) << text;
  EXPECT_NE(text.find("--bind-to none"), std::string::npos) << text;
  EXPECT_NE(text.find("--cpu-bind=none"), std::string::npos) << text;

  CoreFacts cgroup = fine;  // Slurm gave the job 4 cores for 4 ranks
  cgroup.cgroup_cores = 4;
  cgroup.allowed_cores = 4;
  cgroup.planned_cores = 1;
  text = Joined(ClampWarnings(cgroup, {}));
  EXPECT_NE(text.find("cgroup allows 4 cores"), std::string::npos) << text;
  EXPECT_NE(text.find("--cpus-per-task=8"), std::string::npos) << text;

  // A job with --cpus-per-task=8 whose srun step was started without -c (Slurm >= 22.05): the
  // fix is srun's -c, not asking the job for cores it already has.
  CoreFacts step = fine;
  step.cgroup_cores = step.allowed_cores = step.planned_cores = 1;
  step.local_size = 1;
  step.slurm_cpus_per_task = 8;
  text = Joined(ClampWarnings(step, {}));
  EXPECT_NE(text.find("the job asked for --cpus-per-task=8 but this srun step got 1 core"), std::string::npos) << text;
  EXPECT_NE(text.find("srun --cpus-per-task=$SLURM_CPUS_PER_TASK"), std::string::npos) << text;
  EXPECT_EQ(text.find("Ask Slurm for them"), std::string::npos) << text;

  CoreFacts few_threads = fine;
  few_threads.requested_threads = 2;
  text = Joined(ClampWarnings(few_threads, {}));
  EXPECT_NE(text.find("runtime.threads=2 leaves 6 cores of this rank's 8 idle"), std::string::npos) << text;

  // OMP_NUM_THREADS=1 from a launcher is overridden under auto, and said so.
  text = Joined(ClampWarnings(fine, {"OMP_NUM_THREADS=1", "MKL_NUM_THREADS=8"}));
  EXPECT_NE(text.find("OMP_NUM_THREADS=1 in the environment would clamp"), std::string::npos) << text;
  EXPECT_EQ(text.find("MKL_NUM_THREADS"), std::string::npos) << text;  // 8 threads: no clamp

  // mpirun --oversubscribe: 4 ranks on a node whose job has 2 cores.
  CoreFacts oversubscribed;
  oversubscribed.node_cores = oversubscribed.cgroup_cores = oversubscribed.allowed_cores = 2;
  oversubscribed.local_size = 4;
  oversubscribed.planned_cores = 1;
  text = Joined(ClampWarnings(oversubscribed, {}));
  EXPECT_NE(text.find("4 ranks on this node share 2 cores"), std::string::npos) << text;
  EXPECT_NE(text.find("at most 2 ranks per node"), std::string::npos) << text;
  EXPECT_EQ(Joined(ClampWarnings(fine, {})).find("share"), std::string::npos);
}

}  // namespace
}  // namespace ct
