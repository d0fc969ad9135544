#include <cuda_runtime.h>

#include "cluster/gpu_pci.h"

namespace ct {

std::optional<std::string> GpuPciBusId(int device_index) {
  char bus_id[32] = {0};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), device_index) != cudaSuccess) return std::nullopt;
  return std::string(bus_id);
}

std::vector<std::string> VisibleGpuBusIds() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return {};
  std::vector<std::string> ids;
  for (int d = 0; d < count; ++d) ids.push_back(GpuPciBusId(d).value_or("cuda:" + std::to_string(d)));
  return ids;
}

std::optional<int64_t> GpuFreeBytes(int device_index) {
  int previous = 0;
  if (cudaGetDevice(&previous) != cudaSuccess) return std::nullopt;
  size_t free_bytes = 0, total_bytes = 0;
  const bool ok =
      cudaSetDevice(device_index) == cudaSuccess && cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess;
  cudaSetDevice(previous);  // the current device is this thread's state: leave it as it was
  if (!ok) return std::nullopt;
  return static_cast<int64_t>(free_bytes);
}

std::optional<int> GpuComputeMajor(int device_index) {
  int major = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device_index) != cudaSuccess)
    return std::nullopt;
  return major;
}

}  // namespace ct
