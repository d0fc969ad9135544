// The trace's device clock (util/trace.h DeviceTimeline) for a rank that trains on a GPU: CUDA
// events recorded on the current stream at each span's start and end, read once the window has
// closed, so that the spans show when the GPU ran the work rather than when the host queued it.
// device_timeline_cuda.cpp (a CUDA LibTorch) or device_timeline_none.cpp is compiled.
#pragma once

#include <c10/core/Device.h>

#include <memory>

#include "util/trace.h"

namespace ct {

// A timeline for `device`; null on the CPU (the host's clock is the device's).
std::unique_ptr<trace::DeviceTimeline> MakeDeviceTimeline(const c10::Device& device);

}  // namespace ct
