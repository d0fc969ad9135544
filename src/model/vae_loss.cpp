#include "model/vae_loss.h"

#include "model/vae_loss_terms.h"

namespace ct {

PerSampleLoss VaePerSampleLoss(const VaeOutput& out, const torch::Tensor& target) {
  // In float32 whatever precision the forward ran in (bf16 under autocast).
  auto flat_recon = out.recon.to(torch::kFloat).reshape({out.recon.size(0), -1});
  auto flat_target = target.reshape({target.size(0), -1});
  torch::Tensor mse = RowMeanSquaredError(flat_recon, flat_target);
  if (!out.mu.defined()) return {mse, torch::zeros_like(mse)};  // a plain autoencoder: no KL term
  return {mse, RowGaussianKl(out.mu.to(torch::kFloat), out.logvar.to(torch::kFloat))};
}

torch::Tensor VaeBatchLoss(const PerSampleLoss& loss, double beta) { return loss.mse.mean() + beta * loss.kl.mean(); }

ModelOutput VaeObjective(const VaeOutput& out, const Batch& batch, double beta) {
  ModelOutput result;
  if (batch.Has("target")) {
    const PerSampleLoss per_sample = VaePerSampleLoss(out, batch["target"]);
    result.loss = VaeBatchLoss(per_sample, beta);
    result.metrics = {per_sample.mse, per_sample.kl};
  }
  result.output_names = {"recon"};
  result.outputs = {out.recon};
  if (out.mu.defined()) {
    result.output_names.insert(result.output_names.end(), {"mu", "logvar"});
    result.outputs.insert(result.outputs.end(), {out.mu, out.logvar});
  }
  return result;
}

std::vector<std::string> VaeMetricNames() { return {"mse", "kl"}; }

double VaeLossFromSums(const std::vector<double>& sums, double rows, double beta) {
  return (sums[0] + beta * sums[1]) / rows;
}

}  // namespace ct
