// runtime.cuda_graph: the whole training step -- forward, backward, the bucketed NCCL all-reduce,
// clipping and the Adam update -- captured once into a CUDA graph and replayed every step, so
// that a small model's step is one graph launch instead of hundreds of kernel launches.
//
// The stream rule: a capture runs on a non-default stream, and every autograd node runs on the
// stream that was current when it was created -- the parameters' AccumulateGrad nodes, which
// GradientSync holds (their post-hooks record each bucket's ready event), are created when
// GradientSync is built. So the whole training runs on one step stream (MakeStepStream), made
// current before the model, GradientSync and the optimizer exist, and the graph captures on
// that same stream. (Capturing on a side stream while those nodes belong to the legacy default
// stream makes the legacy stream wait on a captured event: the capture fails. PyTorch >= 2.10
// warns of it for DDP; Megatron-LM builds DDP on its capture stream.)
//
// Protocol, step by step (PyTorch's recipe for whole-network capture):
//   1. every step copies its batch into static buffers, one per field (the graph reads those);
//   2. the first `warmup` steps run eagerly (lazy initialisation -- cuBLAS workspaces, NCCL's
//      buffers, the allocator's blocks -- must happen outside a capture);
//   3. the next step is captured on the step stream and then replayed: it is a real step;
//   4. every later step is a replay. What changes per step lives on the device and is set before
//      each replay: the batch (1), the learning rate (a device scalar, FlatAdam::StepOnDevice),
//      the sampling noise (LibTorch's CUDA generator is graph-safe: a replay draws from the seed
//      set by torch::manual_seed before it), Adam's step count (a device tensor that the
//      captured step.add_(1) advances; FlatAdam::StepOnDevice).
// The graph's loss terms come out of a static tensor, valid until the next step.
#pragma once

#include <c10/core/Device.h>

#include <functional>
#include <memory>
#include <string>

#include "data/batch.h"
#include "util/choices.h"

namespace ct {

// What decides whether a step can be captured.
struct GraphFacts {
  bool cuda = false;                  // the training device is a GPU
  bool built = false;                 // this binary has CUDA graphs (a CUDA LibTorch)
  bool torchscript = false;           // model.kind=torchscript
  bool bf16 = false;                  // train.precision=bf16 (autocast's weight cache)
  int64_t accumulation = 1;           // train.accumulation_steps
  bool capturable_optimizer = false;  // FlatAdam::Capturable(): the fused kernel with a tensor lr
  bool skip_nonfinite = false;        // train.on_nonfinite=skip with train.nan_check_every
};

struct GraphDecision {
  bool use = false;
  std::string reason;  // for the start-up log: "runtime.cuda_graph=on: captured after 3 warm-up steps"
};

// Pure. `auto` does not capture yet: the graph step has not run on a GPU (see the README).
GraphDecision DecideCudaGraph(AutoOnOff choice, const GraphFacts& facts);

// One training step on `batch` (the static buffers when captured); returns the step's loss and
// metrics, [1 + metrics], on the device.
using StepBody = std::function<at::Tensor(const Batch& batch)>;

class GraphStep {
 public:
  virtual ~GraphStep() = default;
  // Runs one step as the protocol above says: eagerly (warm-up), by capture and replay, or by
  // replay. The returned tensor is overwritten by the next call.
  virtual at::Tensor Run(const Batch& batch, const StepBody& body) = 0;
};

// The step stream: on a CUDA device, a non-default stream from LibTorch's pool made current on
// this thread for the object's life (the current stream is restored after); on a CPU device, or
// in a build without CUDA, nothing (nullptr). Create it before the model's parameters get
// autograd nodes (before GradientSync is built).
class StepStream {
 public:
  virtual ~StepStream() = default;
};
std::unique_ptr<StepStream> MakeStepStream(const c10::Device& device);

// A CUDA-graph step on `device` (train/cuda_graph_step_cuda.cpp), capturing on the stream current
// now, which must be the step stream (ConfigError if it is the default stream); nullptr in a
// build without CUDA (where DecideCudaGraph never chooses it).
std::unique_ptr<GraphStep> MakeCudaGraphStep(const c10::Device& device, int warmup_steps);
bool CudaGraphsBuilt();

}  // namespace ct
