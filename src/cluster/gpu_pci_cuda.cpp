#include <cuda_runtime.h>

#include "cluster/gpu_pci.h"

namespace ct {

std::optional<std::string> GpuPciBusId(int device_index) {
  char bus_id[32] = {0};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), device_index) != cudaSuccess) return std::nullopt;
  return std::string(bus_id);
}

}  // namespace ct
