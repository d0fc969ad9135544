#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "train/cuda_graph_step.h"
#include "util/error.h"

namespace ct {
namespace {

class CudaStepStream : public StepStream {
 public:
  explicit CudaStepStream(const c10::Device& device)
      : current_(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index())) {}

 private:
  c10::cuda::CUDAStreamGuard current_;  // restores the previous current stream when destroyed
};

class CudaGraphStep : public GraphStep {
 public:
  CudaGraphStep(const c10::Device& device, int warmup_steps)
      : device_(device), warmup_steps_(warmup_steps), stream_(c10::cuda::getCurrentCUDAStream(device.index())) {
    if (stream_ == c10::cuda::getDefaultCUDAStream(device.index())) {
      throw ConfigError(
          "runtime.cuda_graph: the step would be captured on the default CUDA stream, which cannot be captured; "
          "this is a bug in clustertrain (the step stream must be current before the model is built): set "
          "runtime.cuda_graph=off and report it");
    }
  }

  at::Tensor Run(const Batch& batch, const StepBody& body) override {
    const c10::cuda::CUDAGuard guard(device_);
    const c10::cuda::CUDAStreamGuard on_step_stream(stream_);  // the stream the model's nodes belong to
    if (static_.tensors.empty()) static_ = batch.Map([](const at::Tensor& t) { return at::empty_like(t); });
    for (size_t i = 0; i < batch.tensors.size(); ++i) static_.tensors[i].copy_(batch.tensors[i], /*non_blocking=*/true);
    if (graph_) {
      graph_->replay();
      return losses_;
    }
    if (done_ < warmup_steps_) {
      losses_ = body(static_);
    } else {
      graph_ = std::make_unique<at::cuda::CUDAGraph>();
      // Thread-local capture mode: the NCCL watchdog thread's queries of other streams do not
      // invalidate the capture.
      graph_->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
      losses_ = body(static_);
      graph_->capture_end();
      graph_->replay();  // the captured step has not run yet: this runs it
    }
    ++done_;
    return losses_;
  }

 private:
  c10::Device device_;
  int warmup_steps_;
  int done_ = 0;
  c10::cuda::CUDAStream stream_;
  Batch static_;
  at::Tensor losses_;
  std::unique_ptr<at::cuda::CUDAGraph> graph_;
};

}  // namespace

bool CudaGraphsBuilt() { return true; }

std::unique_ptr<GraphStep> MakeCudaGraphStep(const c10::Device& device, int warmup_steps) {
  return std::make_unique<CudaGraphStep>(device, warmup_steps);
}

std::unique_ptr<StepStream> MakeStepStream(const c10::Device& device) {
  if (!device.is_cuda()) return nullptr;
  return std::make_unique<CudaStepStream>(device);
}

}  // namespace ct
