#include "cluster/hwloc_handles.h"

#include <cstdlib>

#include "util/error.h"

namespace ct {

CpuSet CpuSet::FromList(const std::string& list) {
  CpuSet set;
  if (!list.empty() && hwloc_bitmap_list_sscanf(set.handle_, list.c_str()) != 0) {
    throw Error("not a cpu list: '" + list + "' (expected e.g. 0-3,8)");
  }
  return set;
}

CpuSet CpuSet::And(const CpuSet& other) const {
  CpuSet result;
  hwloc_bitmap_and(result.handle_, handle_, other.handle_);
  return result;
}

std::string CpuSet::List() const {
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, handle_) < 0 || text == nullptr) return "?";
  std::string list = text;
  std::free(text);
  return list;
}

Topology Topology::ThisMachine(bool with_pci) {
  hwloc_topology_t handle = nullptr;
  if (hwloc_topology_init(&handle) != 0) throw Error("hwloc_topology_init failed");
  Topology topology(handle);
  hwloc_topology_set_flags(handle, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
  if (with_pci) hwloc_topology_set_io_types_filter(handle, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_load(handle) != 0) {
    throw Error("hwloc could not read this node's topology; set runtime.bind=none to run without self-binding");
  }
  return topology;
}

Topology Topology::Synthetic(const std::string& description) {
  hwloc_topology_t handle = nullptr;
  if (hwloc_topology_init(&handle) != 0) throw Error("hwloc_topology_init failed");
  Topology topology(handle);
  if (hwloc_topology_set_synthetic(handle, description.c_str()) != 0 || hwloc_topology_load(handle) != 0) {
    throw Error("hwloc rejected the synthetic topology '" + description + "'");
  }
  return topology;
}

int Topology::CountCores(const CpuSet& set) const {
  if (set.Empty()) return 0;
  int cores = hwloc_get_nbobjs_inside_cpuset_by_type(handle_, set.get(), HWLOC_OBJ_CORE);
  if (cores <= 0) cores = hwloc_bitmap_weight(set.get());
  return cores > 0 ? cores : 1;
}

}  // namespace ct
