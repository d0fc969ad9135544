// The VAE loss, per sample, so that a batch mean and a dataset-wide (sum, count) reduction
// come from the same numbers:
//   mse_i = mean_j (recon_ij - target_ij)^2
//   kl_i  = -1/2 sum_k (1 + logvar_ik - mu_ik^2 - exp(logvar_ik))
//   loss  = mean_i mse_i + beta * mean_i kl_i   (= F.mse_loss(recon, target) + beta * KL)
// and the model contract's view of it (model/model.h): loss, metrics mse and kl (per row),
// outputs recon, mu and logvar.
#pragma once

#include <torch/types.h>

#include <optional>
#include <vector>

#include "model/model.h"

namespace ct {

struct PerSampleLoss {
  torch::Tensor mse;  // [B]
  torch::Tensor kl;   // [B]
};

// out.mu undefined (a plain autoencoder): kl = 0.
PerSampleLoss VaePerSampleLoss(const VaeOutput& out, const torch::Tensor& target);

// Scalar training loss of a batch.
torch::Tensor VaeBatchLoss(const PerSampleLoss& loss, double beta);

// The VAE objective of a model whose network gave `out` on `batch` (fields input and target):
// loss and metrics {mse, kl} when the batch has a target (predict's may not), outputs
// {recon, mu, logvar} (those defined).
ModelOutput VaeObjective(const VaeOutput& out, const Batch& batch, double beta);
std::vector<std::string> VaeMetricNames();
// (sum mse + beta sum kl) / rows: the validation loss from the metrics' sums.
double VaeLossFromSums(const std::vector<double>& sums, double rows, double beta);

}  // namespace ct
