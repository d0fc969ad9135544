// Adam (torch.optim.Adam; AdamW's decoupled weight decay with train.weight_decay) over parameters
// that live in flat buffers, one parameter group.
//
// Each group's parameters are copied into one contiguous buffer and become views of it, in the
// layout of the group's flat gradient buffer (the gradient buckets of comm/gradient_sync.h, or a
// buffer of its own), and the moments are flat buffers of the same layout. An update is then a
// handful of vectorised passes per group -- on a GPU a handful of kernels -- instead of a loop of
// small ones per parameter tensor. Elementwise, each pass is torch.optim.Adam's single-tensor
// update, so the result equals PyTorch's to float32 rounding.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "comm/gradient_sync.h"

namespace ct {

struct AdamSettings {
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weight_decay = 0.0;  // decoupled (AdamW): p *= 1 - lr * weight_decay before the update
  bool fused = true;          // LibTorch's fused kernel where it has one for the device (HasFusedKernel)
};

class FlatAdam {
 public:
  FlatAdam(std::vector<at::Tensor> params, std::vector<GradientBucket> groups, AdamSettings settings);

  // One group of every parameter with a gradient buffer of its own, each .grad aliasing it (for a
  // model trained without a GradientSync).
  static std::vector<GradientBucket> OwnGradients(const std::vector<at::Tensor>& params);

  // The gradient buffers to zero (.grad tensors stay where they are).
  void ZeroGrad();
  // One update with learning rate `lr`; every parameter's .grad must alias its group's buffer.
  void Step(double lr);

  // Whether this LibTorch has a fused Adam kernel for `device` (CUDA from 2.0, CPU from 2.4).
  static bool HasFusedKernel(const c10::Device& device);
  bool Fused() const { return fused_; }

  // An update whose every input lives on the device, for a CUDA graph (train/cuda_graph_step.h):
  // the learning rate is a tensor (`lr`, [] float32, filled before each replay) and the step count
  // is incremented by the kernels themselves, so that a replayed step uses this step's values,
  // not the captured ones. Only with the fused kernel (Capturable()). CountStep() then counts it
  // on the host, after the step ran, for checkpoints.
  bool Capturable() const { return fused_; }
  void StepOnDevice(const at::Tensor& lr);
  void CountStep() { ++steps_; }

  // For checkpoints: the updates done, and each parameter's moments as views of the buffers.
  int64_t Steps() const { return steps_; }
  void SetSteps(int64_t steps) {
    steps_ = steps;
    device_steps_set_ = false;
  }
  at::Tensor ExpAvg(size_t param) const;
  at::Tensor ExpAvgSq(size_t param) const;
  const std::vector<at::Tensor>& Params() const { return params_; }

 private:
  struct Group {
    at::Tensor params, grads, exp_avg, exp_avg_sq;  // flat, one layout
    at::Tensor step;                                // the fused kernel's step count: [] float32
  };
  void FusedStep(double lr);
  template <class Lr>
  void RunFusedKernel(const Lr& lr);  // flat_adam.cpp only
  // Parameter `param`'s place in one of its group's flat buffers, with its shape.
  at::Tensor View(const at::Tensor& flat, size_t param) const;

  std::vector<at::Tensor> params_;
  AdamSettings settings_;
  std::vector<Group> groups_;
  std::vector<size_t> group_of_;
  std::vector<int64_t> offset_of_;
  int64_t steps_ = 0;
  bool fused_ = false;
  bool device_steps_set_ = false;  // the groups' step tensors hold steps_ (StepOnDevice)
};

}  // namespace ct
