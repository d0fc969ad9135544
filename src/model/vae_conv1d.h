// vae_conv1d: a 1-D convolutional variational autoencoder for waveforms.
//
//   x: [B, L] (one channel) or [B, C, L]
//   encoder:     Conv1d(C, c0, k, stride s, padding k/2) ReLU ... Conv1d(.., c_last) ReLU
//                -> [B, c_last, L_last], flattened
//   to_latent:   Linear(c_last * L_last, 2 * latent) -> [mu | logvar]
//   from_latent: Linear(latent, c_last * L_last), ReLU, reshaped to [B, c_last, L_last]
//   decoder:     ConvTranspose1d(c_last, c_{n-2}, k, s, padding k/2, output_padding) ReLU ...
//                ConvTranspose1d(c0, C, ...) -> [B, C, L] (output_padding restores each length)
//
// Parameter names equal those of the Python module with the same attributes (tests/e2e
// reference_models.py), so model.pt loads into it with load_state_dict.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <vector>

#include "model/model.h"

namespace ct {

struct Conv1dShape {
  std::vector<int64_t> row_dims;  // [L] or [C, L]
  std::vector<int64_t> channels;  // encoder channels c0, c1, ...
  int64_t kernel_size = 7;
  int64_t stride = 2;
  int64_t latent = 16;
};

// Lengths after each encoder layer: L, L_1, ..., L_last.
std::vector<int64_t> Conv1dLengths(int64_t length, const Conv1dShape& shape);

class VaeConv1dImpl : public torch::nn::Module {
 public:
  explicit VaeConv1dImpl(const Conv1dShape& shape);

  // x: [B, L] or [B, C, L]; eps as in VaeMlpImpl::forward.
  VaeOutput forward(const torch::Tensor& x, const torch::Tensor& eps = {});

 private:
  Conv1dShape shape_;
  int64_t in_channels_;
  std::vector<int64_t> lengths_;
  torch::nn::Sequential encoder_{nullptr};
  torch::nn::Linear to_latent_{nullptr};
  torch::nn::Linear from_latent_{nullptr};
  torch::nn::Sequential decoder_{nullptr};
  // The Sequentials' convolutions in order (the ReLUs between them are applied by
  // model/conv_layer.h, on the CPU in place).
  std::vector<torch::nn::Conv1d> encoder_layers_;
  std::vector<torch::nn::ConvTranspose1d> decoder_layers_;
};
TORCH_MODULE(VaeConv1d);

}  // namespace ct
