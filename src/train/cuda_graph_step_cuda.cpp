#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "train/cuda_graph_step.h"

namespace ct {
namespace {

class CudaGraphStep : public GraphStep {
 public:
  CudaGraphStep(const c10::Device& device, int warmup_steps)
      : device_(device),
        warmup_steps_(warmup_steps),
        side_(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index())) {}

  at::Tensor Run(const Batch& batch, const StepBody& body) override {
    const c10::cuda::CUDAGuard guard(device_);
    if (!static_.input.defined()) static_ = {at::empty_like(batch.input), at::empty_like(batch.target)};
    static_.input.copy_(batch.input, /*non_blocking=*/true);
    static_.target.copy_(batch.target, /*non_blocking=*/true);
    if (graph_) {
      graph_->replay();
      return losses_;
    }
    // Warm-up and capture run on the side stream, ordered after the main stream's work (the
    // copies above) and before its next work: two event waits, no host synchronisation.
    const c10::cuda::CUDAStream main = c10::cuda::getCurrentCUDAStream(device_.index());
    at::cuda::CUDAEvent before, after;
    before.record(main);
    before.block(side_);
    {
      const c10::cuda::CUDAStreamGuard on_side(side_);
      if (done_ < warmup_steps_) {
        losses_ = body(static_);
      } else {
        graph_ = std::make_unique<at::cuda::CUDAGraph>();
        // Thread-local capture mode: the NCCL watchdog thread's queries of other streams do
        // not invalidate the capture.
        graph_->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
        losses_ = body(static_);
        graph_->capture_end();
      }
    }
    after.record(side_);
    after.block(main);
    if (graph_) graph_->replay();  // the captured step has not run yet: this runs it
    ++done_;
    return losses_;
  }

 private:
  c10::Device device_;
  int warmup_steps_;
  int done_ = 0;
  c10::cuda::CUDAStream side_;
  Batch static_;
  at::Tensor losses_;
  std::unique_ptr<at::cuda::CUDAGraph> graph_;
};

}  // namespace

bool CudaGraphsBuilt() { return true; }

std::unique_ptr<GraphStep> MakeCudaGraphStep(const c10::Device& device, int warmup_steps) {
  return std::make_unique<CudaGraphStep>(device, warmup_steps);
}

}  // namespace ct
