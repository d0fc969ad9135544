// The PCI bus id of a CUDA device ("0000:17:00.0"), to find the cores next to it with hwloc.
// gpu_pci_cuda.cpp (CUDA runtime found) or gpu_pci_none.cpp is compiled, chosen by CMake.
#pragma once

#include <optional>
#include <string>

namespace ct {

std::optional<std::string> GpuPciBusId(int device_index);

}  // namespace ct
