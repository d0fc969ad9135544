// One fully connected layer, y = x W^T + b, optionally followed by ReLU, with a CPU path that
// does no work beyond the two or three matrix products a layer needs:
//   - the ReLU is applied in place on the product's output (no second activation tensor), and
//     backward masks the incoming gradient with that output (ReLU's derivative);
//   - the weight's and bias's gradients are added straight into their .grad where it already
//     exists (GradientSync points every .grad at its bucket before backward): one GEMM with
//     beta = 1 instead of a GEMM into a new tensor followed by AccumulateGrad's addition; and
//     written over it, with beta = 0, where it is stale (model/stale_gradients.h: the CPU step
//     replaces last step's gradients instead of zeroing them first).
// The parameters' AccumulateGrad nodes still run (with nothing to add), so their post-hooks,
// which GradientSync uses to launch full buckets, fire as before. Hooks registered on the
// weight tensor itself would not see the gradient; nothing in clustertrain uses them.
//
// Under bf16 autocast (train.precision=bf16) the same path runs its products in bfloat16, as
// autocast would (input, weight and bias cast; a bfloat16 output), in one autograd node instead of
// LibTorch's six, and writes the weight's bfloat16 gradient straight into the float32 .grad.
//
// The plain LibTorch path (nn::Linear, relu) is taken where the fast one does not apply: a
// device other than the CPU, a dtype other than float32, autocast to a dtype other than
// bfloat16, or a backward that builds a graph of its own (create_graph). Both give the same
// numbers, bit for bit.
#pragma once

#include <torch/nn/modules/linear.h>

namespace ct {

torch::Tensor LinearLayer(const torch::nn::Linear& layer, const torch::Tensor& x, bool relu);

// The same with the weight [out, in] and bias [out] given as tensors: a parameter, or a tensor
// computed from one (its gradient then flows back through that computation).
torch::Tensor LinearLayer(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, bool relu);

}  // namespace ct
