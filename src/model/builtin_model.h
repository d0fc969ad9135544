// The built-in models (vae_mlp, vae_conv1d) behind the Model interface.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <utility>
#include <vector>

#include "model/model.h"

namespace ct {

// Holder: a TORCH_MODULE holder (VaeMlp, VaeConv1d) whose forward(x, eps) samples with eps.
template <class Holder>
class BuiltinModel : public Model {
 public:
  BuiltinModel(std::string fingerprint, Holder module, int64_t latent)
      : fingerprint_(std::move(fingerprint)), module_(std::move(module)), latent_(latent) {}

  std::string Describe() const override { return fingerprint_; }
  std::string Fingerprint() const override { return fingerprint_; }

  VaeOutput Forward(const at::Tensor& x) override {
    if (!module_->is_training()) return module_->forward(x);
    // eps: [B, latent] from LibTorch's generator (seeded per step by the trainer).
    return module_->forward(x, at::randn({x.size(0), latent_}, x.options()));
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
};

}  // namespace ct
