#include "model/vae_mlp.h"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/linear.h>

namespace ct {

VaeMlpImpl::VaeMlpImpl(int64_t length, const std::vector<int64_t>& hidden, int64_t latent) {
  torch::nn::Sequential encoder;
  int64_t width = length;
  for (int64_t h : hidden) {
    encoder->push_back(torch::nn::Linear(width, h));
    encoder->push_back(torch::nn::ReLU());
    width = h;
  }
  encoder->push_back(torch::nn::Linear(width, 2 * latent));

  torch::nn::Sequential decoder;
  width = latent;
  for (auto it = hidden.rbegin(); it != hidden.rend(); ++it) {
    decoder->push_back(torch::nn::Linear(width, *it));
    decoder->push_back(torch::nn::ReLU());
    width = *it;
  }
  decoder->push_back(torch::nn::Linear(width, length));

  encoder_ = register_module("encoder", encoder);
  decoder_ = register_module("decoder", decoder);
}

VaeOutput VaeMlpImpl::forward(const torch::Tensor& x, const torch::Tensor& eps) {
  auto halves = encoder_->forward(x).chunk(2, /*dim=*/-1);  // [B, latent] each
  torch::Tensor mu = halves[0];
  torch::Tensor logvar = halves[1];
  torch::Tensor z = eps.defined() ? mu + eps * torch::exp(0.5 * logvar) : mu;
  return {decoder_->forward(z), mu, logvar};
}

}  // namespace ct
