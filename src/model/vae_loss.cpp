#include "model/vae_loss.h"

namespace ct {

PerSampleLoss VaePerSampleLoss(const VaeOutput& out, const torch::Tensor& target) {
  auto flat_recon = out.recon.reshape({out.recon.size(0), -1});
  auto flat_target = target.reshape({target.size(0), -1});
  torch::Tensor mse = (flat_recon - flat_target).pow(2).mean(/*dim=*/1);
  torch::Tensor kl = -0.5 * (1 + out.logvar - out.mu.pow(2) - out.logvar.exp()).sum(/*dim=*/1);
  return {mse, kl};
}

torch::Tensor VaeBatchLoss(const PerSampleLoss& loss, double beta) { return loss.mse.mean() + beta * loss.kl.mean(); }

}  // namespace ct
