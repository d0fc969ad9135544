// What this rank's GPU did over an epoch: the peak memory LibTorch's caching allocator had
// allocated and reserved (peaks reset when the epoch starts) and, where the NVIDIA driver's NVML
// library can be loaded (dlopen at run time; no build dependency), the GPU's mean utilisation
// over the epoch's samples. gpu_epoch_stats_cuda.cpp (a CUDA LibTorch) or
// gpu_epoch_stats_none.cpp is compiled, chosen by CMake.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

namespace ct {

struct GpuEpochStats {
  double peak_allocated_mb = 0;
  double peak_reserved_mb = 0;
  std::optional<double> util_percent;  // absent without NVML
};

class GpuEpochMonitor {
 public:
  explicit GpuEpochMonitor(int device_index);
  ~GpuEpochMonitor();
  GpuEpochMonitor(const GpuEpochMonitor&) = delete;
  GpuEpochMonitor& operator=(const GpuEpochMonitor&) = delete;

  void StartEpoch();
  GpuEpochStats EndEpoch();

 private:
  struct Nvml;
  int device_index_;
  std::unique_ptr<Nvml> nvml_;  // null when NVML is not there
  uint64_t epoch_start_us_ = 0;
};

}  // namespace ct
