#include "model/vae_mlp.h"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/linear.h>

#include "model/linear_layer.h"
#include "model/reparameterize.h"

namespace ct {

VaeMlpImpl::VaeMlpImpl(int64_t length, const std::vector<int64_t>& hidden, int64_t latent) {
  torch::nn::Sequential encoder;
  int64_t width = length;
  for (int64_t h : hidden) {
    encoder_layers_.emplace_back(width, h);
    encoder->push_back(encoder_layers_.back());
    encoder->push_back(torch::nn::ReLU());
    width = h;
  }
  encoder_layers_.emplace_back(width, 2 * latent);
  encoder->push_back(encoder_layers_.back());

  torch::nn::Sequential decoder;
  width = latent;
  for (auto it = hidden.rbegin(); it != hidden.rend(); ++it) {
    decoder_layers_.emplace_back(width, *it);
    decoder->push_back(decoder_layers_.back());
    decoder->push_back(torch::nn::ReLU());
    width = *it;
  }
  decoder_layers_.emplace_back(width, length);
  decoder->push_back(decoder_layers_.back());

  encoder_ = register_module("encoder", encoder);
  decoder_ = register_module("decoder", decoder);
}

namespace {
// Linear, ReLU, ..., Linear: the Sequential's layers through LinearLayer (its fast CPU path).
torch::Tensor Stack(const std::vector<torch::nn::Linear>& layers, torch::Tensor h) {
  for (size_t i = 0; i < layers.size(); ++i) h = LinearLayer(layers[i], h, /*relu=*/i + 1 < layers.size());
  return h;
}
}  // namespace

VaeOutput VaeMlpImpl::forward(const torch::Tensor& x, const torch::Tensor& eps) {
  auto halves = Stack(encoder_layers_, x).chunk(2, /*dim=*/-1);  // [B, latent] each
  torch::Tensor mu = halves[0];
  torch::Tensor logvar = halves[1];
  torch::Tensor z = eps.defined() ? Reparameterize(mu, logvar, eps) : mu;
  return {Stack(decoder_layers_, z), mu, logvar};
}

}  // namespace ct
