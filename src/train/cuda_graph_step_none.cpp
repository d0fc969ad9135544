#include "train/cuda_graph_step.h"

namespace ct {

// Built without a CUDA LibTorch: there is no GPU to capture for.
bool CudaGraphsBuilt() { return false; }
std::unique_ptr<GraphStep> MakeCudaGraphStep(const c10::Device& /*device*/, int /*warmup_steps*/) { return nullptr; }
std::unique_ptr<StepStream> MakeStepStream(const c10::Device& /*device*/) { return nullptr; }

}  // namespace ct
