// A LibTorch without CUDA: no rank ever has a CUDA device, so no monitor is ever asked.
#include "cluster/gpu_epoch_stats.h"

namespace ct {

struct GpuEpochMonitor::Nvml {};

GpuEpochMonitor::GpuEpochMonitor(int device_index) : device_index_(device_index) {}
GpuEpochMonitor::~GpuEpochMonitor() = default;
void GpuEpochMonitor::StartEpoch() {}
GpuEpochStats GpuEpochMonitor::EndEpoch() { return {}; }

}  // namespace ct
