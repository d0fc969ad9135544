#include "cluster/thread_plan.h"

#include <ATen/Parallel.h>
#include <hwloc.h>

#include <algorithm>
#include <cstdlib>

#include "util/error.h"

namespace ct {
namespace {

// RAII for the hwloc topology and bitmaps used here.
struct Topology {
  hwloc_topology_t handle = nullptr;
  Topology() {
    if (hwloc_topology_init(&handle) != 0 || hwloc_topology_load(handle) != 0) {
      throw Error("hwloc could not load this node's topology (" + ProcessIdentity() + ")");
    }
  }
  ~Topology() { hwloc_topology_destroy(handle); }
};

struct Bitmap {
  hwloc_bitmap_t handle = hwloc_bitmap_alloc();
  ~Bitmap() { hwloc_bitmap_free(handle); }
};

int CountCores(hwloc_topology_t topology, hwloc_const_cpuset_t set) {
  int cores = hwloc_get_nbobjs_inside_cpuset_by_type(topology, set, HWLOC_OBJ_CORE);
  if (cores <= 0) cores = hwloc_get_nbobjs_inside_cpuset_by_type(topology, set, HWLOC_OBJ_PU);
  return std::max(cores, 1);
}

}  // namespace

int AutoThreads(int allowed_cores, int node_cores, int local_size, bool bound_by_launcher) {
  if (bound_by_launcher) return std::max(allowed_cores, 1);
  // Unbound ranks share the node: an even share each, so that ranks do not oversubscribe.
  return std::max(std::min(allowed_cores, node_cores / std::max(local_size, 1)), 1);
}

ThreadPlan PlanThreads(int requested_threads, int local_size) {
  Topology topology;
  Bitmap bound;
  if (hwloc_get_cpubind(topology.handle, bound.handle, HWLOC_CPUBIND_PROCESS) != 0) {
    hwloc_bitmap_copy(bound.handle, hwloc_topology_get_allowed_cpuset(topology.handle));
  }
  ThreadPlan plan;
  plan.allowed_cores = CountCores(topology.handle, bound.handle);
  plan.node_cores = CountCores(topology.handle, hwloc_topology_get_allowed_cpuset(topology.handle));
  char* list = nullptr;
  hwloc_bitmap_list_asprintf(&list, bound.handle);
  plan.allowed_cpus = list ? list : "?";
  std::free(list);

  const bool bound_by_launcher = plan.allowed_cores < plan.node_cores;
  if (requested_threads > 0) {
    plan.threads = requested_threads;
    plan.reason = "runtime.threads=" + std::to_string(requested_threads);
  } else {
    plan.threads = AutoThreads(plan.allowed_cores, plan.node_cores, local_size, bound_by_launcher);
    plan.reason = bound_by_launcher
                      ? "auto: all " + std::to_string(plan.allowed_cores) + " cores of this rank's binding"
                      : "auto: " + std::to_string(plan.node_cores) + " node cores / " +
                            std::to_string(local_size) + " local ranks";
  }
  return plan;
}

void ApplyThreadPlan(const ThreadPlan& plan) { at::set_num_threads(plan.threads); }

}  // namespace ct
