// The built-in models (vae_mlp, vae_conv1d) behind the Model interface.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <utility>
#include <vector>

#include "model/model.h"
#include "model/precision.h"
#include "model/vae_loss.h"

namespace ct {

// Holder: a TORCH_MODULE holder (VaeMlp, VaeConv1d) whose forward(x, eps) samples with eps.
// Trained on the batch fields input (the network's input) and target (the reconstruction's).
template <class Holder>
class BuiltinModel : public Model {
 public:
  BuiltinModel(std::string fingerprint, Holder module, int64_t latent, double beta)
      : fingerprint_(std::move(fingerprint)), module_(std::move(module)), latent_(latent), beta_(beta) {}

  std::string Describe() const override { return fingerprint_; }
  std::string Fingerprint() const override { return fingerprint_; }
  std::vector<std::string> MetricNames() const override { return VaeMetricNames(); }

  ModelOutput Forward(const Batch& batch, Precision precision) override {
    const at::Tensor& x = batch["input"];  // [B, ...]
    VaeOutput out;
    {
      // The network under autocast; the loss outside it, in float32.
      const AutocastScope autocast(precision == Precision::kBf16, x.device().type());
      // eps: [B, latent] from LibTorch's generator (seeded per step by the trainer).
      out = module_->is_training() ? module_->forward(x, at::randn({x.size(0), latent_}, x.options()))
                                   : module_->forward(x);
    }
    return VaeObjective(out, batch, beta_);
  }
  std::optional<double> LossFromMetricSums(const std::vector<double>& sums, double rows) const override {
    return VaeLossFromSums(sums, rows, beta_);
  }
  void SetTraining(bool on) override { module_->train(on); }
  void To(const c10::Device& device) override { module_->to(device); }
  std::vector<at::Tensor> Parameters() override { return module_->parameters(); }
  std::vector<NamedTensor> State() override {
    std::vector<NamedTensor> state;
    for (const auto& item : module_->named_parameters()) state.push_back({item.key(), item.value(), false});
    for (const auto& item : module_->named_buffers()) state.push_back({item.key(), item.value(), true});
    return state;
  }

 private:
  std::string fingerprint_;
  Holder module_;
  int64_t latent_;
  double beta_;
};

}  // namespace ct
