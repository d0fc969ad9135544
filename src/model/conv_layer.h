// 1-D convolution layers, optionally followed by ReLU, with a CPU path that spends its time in
// the convolution kernels and nothing else:
//   - ReLU in place on the convolution's output, and backward masks with that output;
//   - ConvTranspose1d computed as what it is, the adjoint of a Conv1d with the same weight: its
//     forward is that Conv1d's input gradient, its input gradient that Conv1d's forward, its
//     weight gradient that Conv1d's weight gradient with the roles of input and output swapped.
//     ATen runs those three through its optimised (oneDNN) convolution kernels, where some
//     LibTorch builds run a transposed convolution through a slow native loop (Debian's 1.13:
//     slow_conv_transpose2d, 2-3x slower than the same FLOPs as a Conv1d).
// Under bf16 autocast (train.precision=bf16) the same path runs in bfloat16, with the input,
// weight and bias cast as autocast casts them and a bfloat16 output (LibTorch's own convolutions
// under autocast take the plain [B, C, L] layout, and in 1.13 the slow transposed loop).
// The plain LibTorch path is taken on other devices and dtypes, under autocast to another dtype,
// and for dilation or groups other than 1. Both give the same numbers to float32 (bfloat16)
// rounding.
#pragma once

#include <torch/nn/modules/conv.h>

namespace ct {

torch::Tensor Conv1dLayer(const torch::nn::Conv1d& layer, const torch::Tensor& x, bool relu);
torch::Tensor ConvTranspose1dLayer(const torch::nn::ConvTranspose1d& layer, const torch::Tensor& x, bool relu);

}  // namespace ct
