// vae_mlp: a fully connected variational autoencoder for waveforms.
//
//   encoder: Linear(L, h0) ReLU Linear(h0, h1) ReLU ... Linear(h_last, 2*latent) -> [mu | logvar]
//   decoder: Linear(latent, h_last) ReLU ... Linear(h0, L)
//
// Parameter names equal those of the Python module
//   encoder = nn.Sequential(...), decoder = nn.Sequential(...)
// ("encoder.0.weight", ...), so model.pt loads into it with load_state_dict.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>

#include <vector>

#include "model/model.h"

namespace ct {

class VaeMlpImpl : public torch::nn::Module {
 public:
  VaeMlpImpl(int64_t length, const std::vector<int64_t>& hidden, int64_t latent);

  // x: [B, L]. eps: [B, latent] standard-normal noise for the reparameterisation
  // z = mu + eps * exp(logvar / 2); undefined eps means z = mu (deterministic, for validation).
  VaeOutput forward(const torch::Tensor& x, const torch::Tensor& eps = {});

 private:
  torch::nn::Sequential encoder_{nullptr};
  torch::nn::Sequential decoder_{nullptr};
  // The Sequentials' Linear layers in order (they hold the parameters; the ReLUs between them
  // are applied by model/linear_layer.h).
  std::vector<torch::nn::Linear> encoder_layers_;
  std::vector<torch::nn::Linear> decoder_layers_;
};
TORCH_MODULE(VaeMlp);

}  // namespace ct
