// Adam over flat parameter buffers (train/flat_params.h), one parameter group: torch.optim.AdamW
// (decoupled weight decay) or torch.optim.Adam (weight decay as an L2 term of the gradient). The
// moments are flat buffers of the parameters' layout. Elementwise, each pass is torch.optim's
// single-tensor update, so the result equals PyTorch's to float32 rounding; where LibTorch has a
// fused kernel for the device it runs instead (torch.optim.Adam(fused=True)), and on the CPU
// our own one-pass kernel (train/adam_cpu.h) does, with the step count on the host.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "train/flat_params.h"
#include "train/optimizer.h"

namespace ct {

struct AdamSettings {
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weight_decay = 0.0;
  bool decoupled = true;  // AdamW: p *= 1 - lr * weight_decay before the update; else Adam: g += wd * p
  bool fused = true;      // LibTorch's fused kernel where it has one for the device (HasFusedKernel)
  bool one_pass = true;   // else, on the CPU with float32 buffers: one pass of train/adam_cpu.h
  // The one-pass update split over these ranks (runtime.shard_optimizer: a node's ranks): each
  // updates its ShardOf part of every buffer (see node_shared for how the others see it). The
  // ranks on a node share its memory bandwidth, and Adam streams 28 bytes per parameter: done by
  // every rank, that traffic is repeated once per rank. Null, or one rank: every rank updates
  // everything.
  Communicator* shard_over = nullptr;
  // The split's parameters and moments in memory the node's ranks share (Communicator::
  // NodeSharedZeros): each rank updates its part in place and the others read it there, so a
  // barrier replaces the all-gather, and the node holds one copy of them instead of one per
  // rank. Where the node cannot share memory (a full /dev/shm), or with this false, the ranks
  // all-gather the parameters after each update, and the moments' other parts stay stale until
  // GatherState().
  bool node_shared = true;
};

class FlatAdam : public Optimizer {
 public:
  FlatAdam(std::vector<at::Tensor> params, std::vector<GradientBucket> groups, AdamSettings settings);

  std::string Describe() const override;
  void ZeroGrad() override;
  void Step(double lr) override;
  void GatherState() override;

  // Whether this LibTorch has a fused Adam kernel for `device` (CUDA from 2.0, CPU from 2.4).
  static bool HasFusedKernel(const c10::Device& device);

  // Whether the fused kernel runs (settings.fused where HasFusedKernel). It increments the step
  // count itself, so that a replayed step uses this step's values, not the captured ones:
  // capturable with the fused kernel only.
  bool Capturable() const override { return fused_; }
  void StepOnDevice(const at::Tensor& lr) override;
  void CountStep() override { ++steps_; }

  int64_t Steps() const override { return steps_; }
  void SetSteps(int64_t steps) override {
    steps_ = steps;
    device_steps_set_ = false;
  }
  const char* CheckpointKey() const override { return "adam"; }  // AdamW's too: the moments are alike
  std::vector<std::string> StateNames() const override { return {"exp_avg", "exp_avg_sq"}; }
  at::Tensor State(size_t param, size_t name) const override;
  const std::vector<at::Tensor>& Params() const override { return flat_.Params(); }
  at::Tensor ExpAvg(size_t param) const { return State(param, 0); }
  at::Tensor ExpAvgSq(size_t param) const { return State(param, 1); }

 private:
  void FusedStep(double lr);
  void OnePassStep(double lr);
  template <class Lr>
  void RunFusedKernel(const Lr& lr);  // flat_adam.cpp only

  // Declared in the order the constructor decides them: the kernel, the split, the shared
  // memory, and then where the parameters go.
  AdamSettings settings_;
  bool fused_ = false;
  bool one_pass_ = false;   // train/adam_cpu.h's kernel (CPU, float32, not fused_)
  bool sharded_ = false;    // one_pass_ split over settings_.shard_over's ranks
  NodeSharedBuffers node_;  // sharded_ and node_shared: per group the parameters, then both moments
  FlatParams flat_;
  std::vector<at::Tensor> exp_avg_, exp_avg_sq_;  // per group, flat
  std::vector<at::Tensor> step_;                  // per group: the fused kernel's step count, [] float32
  int64_t steps_ = 0;
  bool device_steps_set_ = false;  // the groups' step tensors hold steps_ (StepOnDevice)

  std::string SplitDescription() const;
  bool Shared() const { return !node_.buffers.empty(); }
  // Group buffers of one kind from node_: 0 the parameters, 1 and 2 the moments.
  std::vector<at::Tensor> SharedPart(size_t kind) const;
};

}  // namespace ct
