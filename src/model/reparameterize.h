// The VAE's latent sample z = mu + eps * exp(logvar / 2) (the reparameterisation trick), one
// autograd node on the CPU where LibTorch's ops make four forward and four backward (mul, exp,
// mul, add), each with its own [B, K] tensor. Its backward: dz/dmu = 1, and
// dz/dlogvar = eps * exp(logvar / 2) / 2, from the exp(logvar / 2) the forward kept.
//
// LibTorch's ops where the fast path does not apply (as model/vae_loss_terms.h): a device other
// than the CPU, a dtype other than float32, eps that requires a gradient, or a backward that
// builds a graph of its own. Both give the same numbers bit for bit (ATen's exp kernel, the same
// float32 products and sums in the same order).
#pragma once

#include <torch/types.h>

namespace ct {

// mu, logvar, eps: [B, K] (mu and logvar may be column halves of one tensor). Returns [B, K].
torch::Tensor Reparameterize(const torch::Tensor& mu, const torch::Tensor& logvar, const torch::Tensor& eps);

}  // namespace ct
