#include "train/cuda_graph_step.h"

namespace ct {

// Built without a CUDA LibTorch: there is no GPU to capture for.
bool CudaGraphsBuilt() { return false; }
std::unique_ptr<GraphStep> MakeCudaGraphStep(const c10::Device& /*device*/, int /*warmup_steps*/) { return nullptr; }

}  // namespace ct
