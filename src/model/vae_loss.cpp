#include "model/vae_loss.h"

#include "model/precision.h"
#include "model/vae_loss_terms.h"

namespace ct {

namespace {
// [B, ...] as [B, features]: a [B, L] tensor itself (no view, and no node in the graph).
torch::Tensor Rows(const torch::Tensor& t) { return t.dim() == 2 ? t : t.reshape({t.size(0), -1}); }
}  // namespace

PerSampleLoss VaePerSampleLoss(const VaeOutput& out, const torch::Tensor& target) {
  // In float32 whatever precision the forward ran in (bf16 under autocast).
  const torch::Tensor flat_recon = Rows(InDtype(out.recon, torch::kFloat));
  const torch::Tensor flat_target = Rows(target);
  torch::Tensor mse = RowMeanSquaredError(flat_recon, flat_target);
  if (!out.mu.defined()) return {mse, torch::zeros_like(mse)};  // a plain autoencoder: no KL term
  return {mse, RowGaussianKl(InDtype(out.mu, torch::kFloat), InDtype(out.logvar, torch::kFloat))};
}

torch::Tensor VaeBatchLoss(const PerSampleLoss& loss, double beta) {
  return WeightedBatchMean(loss.mse, loss.kl, beta);
}

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
