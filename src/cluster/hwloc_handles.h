// RAII for hwloc's topology and bitmaps, so that no early return or exception leaks them.
#pragma once

#include <hwloc.h>

#include <string>

namespace ct {

// A set of logical processors (PUs) by OS index. Value semantics.
class CpuSet {
 public:
  CpuSet() : handle_(hwloc_bitmap_alloc()) {}
  explicit CpuSet(hwloc_const_bitmap_t bits) : handle_(hwloc_bitmap_dup(bits)) {}
  static CpuSet FromList(const std::string& list);  // hwloc list syntax: "0-3,8"
  CpuSet(const CpuSet& other) : handle_(hwloc_bitmap_dup(other.handle_)) {}
  CpuSet& operator=(const CpuSet& other) {
    hwloc_bitmap_copy(handle_, other.handle_);
    return *this;
  }
  ~CpuSet() { hwloc_bitmap_free(handle_); }

  hwloc_bitmap_t get() const { return handle_; }
  bool Empty() const { return hwloc_bitmap_iszero(handle_); }
  bool operator==(const CpuSet& other) const { return hwloc_bitmap_isequal(handle_, other.handle_); }
  bool Intersects(const CpuSet& other) const { return hwloc_bitmap_intersects(handle_, other.handle_); }
  bool Includes(const CpuSet& other) const { return hwloc_bitmap_isincluded(other.handle_, handle_); }
  CpuSet And(const CpuSet& other) const;
  std::string List() const;  // "0-3,8"; "" for the empty set

 private:
  hwloc_bitmap_t handle_;
};

class Topology {
 public:
  // This machine, with disallowed PUs kept (so that a cgroup's restriction can be measured)
  // and, when `with_pci`, PCI devices (to find the cores next to a GPU).
  static Topology ThisMachine(bool with_pci);
  // A synthetic machine for tests, e.g. "pack:2 numa:2 core:8 pu:2".
  static Topology Synthetic(const std::string& description);

  Topology(Topology&& other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;
  ~Topology() {
    if (handle_) hwloc_topology_destroy(handle_);
  }
  hwloc_topology_t get() const { return handle_; }

  CpuSet AllPus() const { return CpuSet(hwloc_topology_get_topology_cpuset(handle_)); }
  CpuSet AllowedPus() const { return CpuSet(hwloc_topology_get_allowed_cpuset(handle_)); }
  // Physical cores wholly inside `set`; PUs when the set splits cores (at least 1 if non-empty).
  int CountCores(const CpuSet& set) const;

 private:
  explicit Topology(hwloc_topology_t handle) : handle_(handle) {}
  hwloc_topology_t handle_;
};

}  // namespace ct
