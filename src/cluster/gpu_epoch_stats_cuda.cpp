#include <c10/cuda/CUDACachingAllocator.h>
#include <dlfcn.h>

#include <chrono>
#include <vector>

#include "cluster/gpu_epoch_stats.h"
#include "cluster/gpu_pci.h"

namespace ct {

// The few NVML entry points used, by their C signatures (nvml.h, stable since NVML 5): loaded
// with dlopen so that the binary runs where the driver's libnvidia-ml is missing.
struct GpuEpochMonitor::Nvml {
  using Device = void*;
  struct Sample {
    unsigned long long time_us;
    union {
      double d;
      unsigned int ui;
      unsigned long ul;
      unsigned long long ull;
      signed long long sll;
    } value;
  };
  static constexpr int kSuccess = 0;
  static constexpr int kGpuUtilizationSamples = 1;  // NVML_GPU_UTILIZATION_SAMPLES
  static constexpr int kUnsignedInt = 1;            // NVML_VALUE_TYPE_UNSIGNED_INT

  void* library = nullptr;
  Device device = nullptr;
  int (*get_samples)(Device, int, unsigned long long, int*, unsigned int*, Sample*) = nullptr;

  static std::unique_ptr<Nvml> Open(int device_index) {
    auto nvml = std::make_unique<Nvml>();
    nvml->library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nvml->library) return nullptr;
    auto init = reinterpret_cast<int (*)()>(dlsym(nvml->library, "nvmlInit_v2"));
    auto by_bus_id =
        reinterpret_cast<int (*)(const char*, Device*)>(dlsym(nvml->library, "nvmlDeviceGetHandleByPciBusId_v2"));
    nvml->get_samples = reinterpret_cast<decltype(get_samples)>(dlsym(nvml->library, "nvmlDeviceGetSamples"));
    const std::optional<std::string> bus_id = GpuPciBusId(device_index);  // CUDA's index is not NVML's
    if (!init || !by_bus_id || !nvml->get_samples || !bus_id || init() != kSuccess ||
        by_bus_id(bus_id->c_str(), &nvml->device) != kSuccess) {
      return nullptr;
    }
    return nvml;
  }
  ~Nvml() {
    if (library) dlclose(library);
  }

  // The mean of the utilisation samples NVML took after `since_us`; none if it has none.
  std::optional<double> MeanUtilization(uint64_t since_us) const {
    int type = 0;
    unsigned int count = 0;
    if (get_samples(device, kGpuUtilizationSamples, since_us, &type, &count, nullptr) != kSuccess || count == 0) {
      return std::nullopt;
    }
    std::vector<Sample> samples(count);
    if (get_samples(device, kGpuUtilizationSamples, since_us, &type, &count, samples.data()) != kSuccess ||
        type != kUnsignedInt || count == 0) {
      return std::nullopt;
    }
    double sum = 0;
    for (unsigned int i = 0; i < count; ++i) sum += samples[i].value.ui;
    return sum / count;
  }
};

GpuEpochMonitor::GpuEpochMonitor(int device_index) : device_index_(device_index), nvml_(Nvml::Open(device_index)) {}

GpuEpochMonitor::~GpuEpochMonitor() = default;

void GpuEpochMonitor::StartEpoch() {
  c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(device_index_));
  epoch_start_us_ = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

GpuEpochStats GpuEpochMonitor::EndEpoch() {
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device_index_));
  constexpr size_t kAggregate = 0;  // StatType::AGGREGATE (both pools), whose namespace moved in LibTorch 2.x
  constexpr double kMiB = 1024.0 * 1024.0;
  GpuEpochStats out;
  out.peak_allocated_mb = static_cast<double>(stats.allocated_bytes[kAggregate].peak) / kMiB;
  out.peak_reserved_mb = static_cast<double>(stats.reserved_bytes[kAggregate].peak) / kMiB;
  if (nvml_) out.util_percent = nvml_->MeanUtilization(epoch_start_us_);
  return out;
}

}  // namespace ct
