#include "cluster/gpu_pci.h"

namespace ct {

// Built without the CUDA runtime: GPU locality is unknown, so binding uses the node's cores.
std::optional<std::string> GpuPciBusId(int /*device_index*/) { return std::nullopt; }

std::vector<std::string> VisibleGpuBusIds() { return {}; }

std::optional<int64_t> GpuFreeBytes(int /*device_index*/) { return std::nullopt; }

std::optional<int> GpuComputeMajor(int /*device_index*/) { return std::nullopt; }

}  // namespace ct
