// The optimizer seam (train.optimizer): what training, checkpoints and `bench step` need of an
// optimizer. Every optimizer here keeps the parameters in flat buffers laid out as the gradient
// buckets (comm/gradient_sync.h), the parameters becoming views of them, so that an update is a
// few vectorised passes over a few buffers. A new optimizer is one class and one line in
// MakeOptimizer.
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

#include "comm/gradient_sync.h"
#include "util/config.h"

namespace ct {

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  // For the start-up log: "AdamW over 1 flat buffer(s), LibTorch's fused kernel".
  virtual std::string Describe() const = 0;

  // The gradient buffers to zero (.grad tensors stay where they are).
  virtual void ZeroGrad() = 0;
  // One update with learning rate `lr`; every parameter's .grad must alias its bucket's buffer.
  virtual void Step(double lr) = 0;

  // An update whose every input lives on the device, for a CUDA graph (train/cuda_graph_step.h):
  // `lr` is a [] float32 tensor filled before each replay. Only where Capturable(); CountStep()
  // then counts the update on the host, after it ran.
  virtual bool Capturable() const = 0;
  virtual void StepOnDevice(const at::Tensor& lr) = 0;
  virtual void CountStep() = 0;

  // Checkpoints: the updates done, and per parameter its state tensors, one per StateNames()
  // entry, as views of the flat buffers (copy out to save, copy in to restore). CheckpointKey()
  // names the archive they are saved under.
  virtual int64_t Steps() const = 0;
  virtual void SetSteps(int64_t steps) = 0;
  virtual const char* CheckpointKey() const = 0;
  virtual std::vector<std::string> StateNames() const = 0;
  virtual at::Tensor State(size_t param, size_t name) const = 0;
  // Collective, on every rank before State() is read: an optimizer whose update is split over
  // ranks (FlatAdam's shard_over) completes its state from the other ranks' parts.
  virtual void GatherState() {}
  virtual const std::vector<at::Tensor>& Params() const = 0;
};

// The optimizer train.optimizer names, over `params` in the flat layout of `buckets`.
// `fused`: LibTorch's fused kernel where the optimizer and device have one (training: on CUDA);
// else `one_pass`: Adam's own one-pass CPU kernel (train/adam_cpu.h); else ATen's elementwise
// passes. `bench step --adam` chooses among them for a side-by-side measurement. `shard_over`:
// the ranks that split Adam's one-pass update (runtime.shard_optimizer; null: none).
std::unique_ptr<Optimizer> MakeOptimizer(const TrainConfig& train, std::vector<at::Tensor> params,
                                         std::vector<GradientBucket> buckets, bool fused, bool one_pass = true,
                                         Communicator* shard_over = nullptr);

}  // namespace ct
