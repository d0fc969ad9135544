// A LibTorch without CUDA: every device is the CPU, timed by the host's clock.
#include "run/device_timeline.h"

namespace ct {

std::unique_ptr<trace::DeviceTimeline> MakeDeviceTimeline(const c10::Device& /*device*/) { return nullptr; }

}  // namespace ct
