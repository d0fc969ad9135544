// What the CUDA runtime says about this process's GPUs: their PCI bus ids ("0000:17:00.0", to
// find the cores next to them with hwloc) and free memory. gpu_pci_cuda.cpp (CUDA runtime
// found) or gpu_pci_none.cpp (no GPU facts: CPU placement) is compiled, chosen by CMake.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ct {

std::optional<std::string> GpuPciBusId(int device_index);

// The bus ids of the GPUs this process sees, in CUDA device order (empty without any).
std::vector<std::string> VisibleGpuBusIds();

// Free bytes on the device now (cudaMemGetInfo), or nullopt where unknown.
std::optional<int64_t> GpuFreeBytes(int device_index);

// The device's compute capability major version (8: Ampere, 9: Hopper), or nullopt.
std::optional<int> GpuComputeMajor(int device_index);

}  // namespace ct
