#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <vector>

#include "run/device_timeline.h"
#include "util/error.h"

namespace ct {
namespace {

void Check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw Error(std::string("trace: ") + what + ": " + cudaGetErrorString(status));
}

class CudaTimeline : public trace::DeviceTimeline {
 public:
  explicit CudaTimeline(const c10::Device& device) : device_(device) {}
  ~CudaTimeline() override {
    for (cudaEvent_t event : events_) cudaEventDestroy(event);
    if (reference_) cudaEventDestroy(reference_);
  }

  // The reference event, recorded on an idle device and waited for: its time on the host's clock
  // is then known to within the synchronisation's latency (microseconds).
  void Begin(trace::Clock::time_point zero) override {
    const c10::cuda::CUDAGuard guard(device_.index());
    Check(cudaEventCreate(&reference_), "cudaEventCreate");
    Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    Check(cudaEventRecord(reference_, c10::cuda::getCurrentCUDAStream(device_.index()).stream()), "cudaEventRecord");
    Check(cudaEventSynchronize(reference_), "cudaEventSynchronize");
    reference_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(trace::Clock::now() - zero).count();
  }

  // No synchronisation: an event recorded on the stream the work is queued on. None while that
  // stream is being captured into a CUDA graph (an event there would become part of the graph).
  int64_t Mark() override {
    const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(device_.index()).stream();
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &capturing) != cudaSuccess || capturing != cudaStreamCaptureStatusNone) {
      return -1;
    }
    cudaEvent_t event = nullptr;
    Check(cudaEventCreate(&event), "cudaEventCreate");
    Check(cudaEventRecord(event, stream), "cudaEventRecord");
    events_.push_back(event);
    return static_cast<int64_t>(events_.size()) - 1;
  }

  std::vector<int64_t> Resolve() override {
    std::vector<int64_t> times;
    for (cudaEvent_t event : events_) {
      Check(cudaEventSynchronize(event), "cudaEventSynchronize");
      float ms = 0;
      Check(cudaEventElapsedTime(&ms, reference_, event), "cudaEventElapsedTime");
      times.push_back(reference_ns_ + static_cast<int64_t>(static_cast<double>(ms) * 1e6));
    }
    return times;
  }

  std::string Describe() const override {
    return "CUDA events on the training thread's current stream (resolution about 0.5 us), read after the window";
  }

 private:
  c10::Device device_;
  cudaEvent_t reference_ = nullptr;
  int64_t reference_ns_ = 0;
  std::vector<cudaEvent_t> events_;
};

}  // namespace

std::unique_ptr<trace::DeviceTimeline> MakeDeviceTimeline(const c10::Device& device) {
  if (!device.is_cuda()) return nullptr;
  return std::make_unique<CudaTimeline>(device);
}

}  // namespace ct
