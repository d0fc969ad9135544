// The VAE loss's two per-row terms, each one autograd node on the CPU:
//   RowMeanSquaredError(recon, target)[i] = mean_j (recon_ij - target_ij)^2
//   RowGaussianKl(mu, logvar)[i]          = -1/2 sum_k (1 + logvar_ik - mu_ik^2 - exp(logvar_ik))
// Written with ATen's elementwise ops, the squared error alone made five passes over a batch of
// reconstructions and allocated four tensors of its size (sub, pow, and backward's pow, mul and
// mul): about a fifth of the demo's CPU step. Here its forward reads recon and target once and
// writes nothing of their size; its backward reads them once and writes the gradient once.
// The KL term is small, but was ten nodes forward and ten backward; here it is one of each, and
// so is the batch loss that weighs the two terms' means.
//
// LibTorch's ops are used where the fast path does not apply: a device other than the CPU, a
// dtype other than float32, a target that requires a gradient, or a backward that builds a
// graph of its own (create_graph). Both give the same numbers to float32 rounding.
#pragma once

#include <torch/types.h>

namespace ct {

// recon, target: [B, L]. Returns [B].
torch::Tensor RowMeanSquaredError(const torch::Tensor& recon, const torch::Tensor& target);

// mu, logvar: [B, K]. Returns [B].
torch::Tensor RowGaussianKl(const torch::Tensor& mu, const torch::Tensor& logvar);

// mean_i mse_i + beta mean_i kl_i, one node (mse, kl: [B]).
torch::Tensor WeightedBatchMean(const torch::Tensor& mse, const torch::Tensor& kl, double beta);

}  // namespace ct
