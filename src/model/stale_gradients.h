// Zeroing a step's gradients without a pass over them (the CPU training step).
//
// Instead of zeroing every .grad before the backward, each is marked stale: its values are last
// step's, and the backward's first writer of it replaces them rather than adding to them.
//   - LinearLayer's CPU path (model/linear_layer.h) claims a stale .grad and writes its products
//     straight into it (a GEMM with beta = 0: the old values are not even read);
//   - any other gradient reaches .grad through autograd's AccumulateGrad, and a hook on that
//     node copies it over a stale .grad instead of letting it be added (the same numbers);
//   - after the step's last backward, ZeroUnwritten() zeroes what no one wrote (a parameter this
//     backward did not use), before the gradients are all-reduced or read.
// With gradient accumulation only the first micro-batch's writes replace; later ones add.
// This saves one write pass over every gradient and one read in each weight-gradient product.
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <vector>

namespace ct {

class StaleGradients {
 public:
  // `params`: leaf tensors that require grad (a .grad, where defined, aliasing the optimizer's
  // flat buffers). Adds a hook to each parameter's AccumulateGrad node.
  explicit StaleGradients(std::vector<at::Tensor> params);
  ~StaleGradients();  // removes the hooks and forgets the parameters
  StaleGradients(const StaleGradients&) = delete;
  StaleGradients& operator=(const StaleGradients&) = delete;

  // Before a step's first backward, in place of zero_grad: every .grad is to be replaced.
  void MarkAll();
  // After the step's last backward: .grad <- 0 where nothing was written since MarkAll().
  void ZeroUnwritten();

 private:
  std::vector<at::Tensor> params_;
  std::vector<std::shared_ptr<void>> hook_removers_;  // each removes one hook when released
};

// For a layer's backward that writes `param`'s whole gradient itself: true if its .grad is stale,
// in which case it is no longer stale and the caller must write (not add) the gradient into it.
bool ClaimStaleGradient(const at::Tensor& param);

}  // namespace ct
