#include "model/vae_conv1d.h"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/conv.h>

#include "model/conv_layer.h"
#include "model/linear_layer.h"
#include "model/reparameterize.h"

namespace ct {

std::vector<int64_t> Conv1dLengths(int64_t length, const Conv1dShape& shape) {
  const int64_t padding = shape.kernel_size / 2;
  std::vector<int64_t> lengths = {length};
  for (size_t i = 0; i < shape.channels.size(); ++i) {
    // PyTorch's Conv1d output length; padding k/2 keeps the span >= 0.
    lengths.push_back((lengths.back() + 2 * padding - shape.kernel_size) / shape.stride + 1);
  }
  return lengths;
}

VaeConv1dImpl::VaeConv1dImpl(const Conv1dShape& shape)
    : shape_(shape),
      in_channels_(shape.row_dims.size() == 2 ? shape.row_dims[0] : 1),
      lengths_(Conv1dLengths(shape.row_dims.back(), shape)) {
  const int64_t k = shape.kernel_size, s = shape.stride, padding = k / 2;
  const size_t n = shape.channels.size();
  torch::nn::Sequential encoder;
  int64_t in = in_channels_;
  for (int64_t c : shape.channels) {
    encoder_layers_.emplace_back(torch::nn::Conv1dOptions(in, c, k).stride(s).padding(padding));
    encoder->push_back(encoder_layers_.back());
    encoder->push_back(torch::nn::ReLU());
    in = c;
  }
  const int64_t flat = shape.channels.back() * lengths_.back();
  torch::nn::Sequential decoder;
  for (size_t i = n; i-- > 0;) {
    const int64_t out = i > 0 ? shape.channels[i - 1] : in_channels_;
    // The length a transposed convolution gives, short of lengths_[i] by less than the stride.
    const int64_t output_padding = lengths_[i] - ((lengths_[i + 1] - 1) * s - 2 * padding + k);
    decoder_layers_.emplace_back(torch::nn::ConvTranspose1dOptions(shape.channels[i], out, k)
                                     .stride(s)
                                     .padding(padding)
                                     .output_padding(output_padding));
    decoder->push_back(decoder_layers_.back());
    if (i > 0) decoder->push_back(torch::nn::ReLU());
  }
  encoder_ = register_module("encoder", encoder);
  to_latent_ = register_module("to_latent", torch::nn::Linear(flat, 2 * shape.latent));
  from_latent_ = register_module("from_latent", torch::nn::Linear(shape.latent, flat));
  decoder_ = register_module("decoder", decoder);
}

namespace {

// Whether [B, C, L] activations lie in NWC memory, as model/conv_layer.h's CPU path leaves them.
bool ChannelsLastMemory(const torch::Tensor& h) { return h.size(1) > 1 && h.stride(1) == 1; }

// Between the convolutions and the two Linear layers, PyTorch's order of the flattened
// activations is channel-major (index c * L + l), and the Linear weights are laid out for it.
// Where the activations are in NWC memory the free flattening is length-major (l * C + c):
// there the weights' columns (to_latent) and rows (from_latent) are permuted to that order
// instead, a copy of two small matrices where the alternative is a transposing copy of the whole
// batch's activations on each side, forward and backward (four 4 MB copies of 0.37 ms each at
// the demo's shapes; the step went from 29.1 to 28.5 ms).

// to_latent on the encoder's output h: [B, c, l] -> [B, 2 latent].
torch::Tensor ToLatent(const torch::nn::Linear& layer, const torch::Tensor& h) {
  if (!ChannelsLastMemory(h)) return LinearLayer(layer, h.flatten(1), /*relu=*/false);
  const int64_t batch = h.size(0), c = h.size(1), l = h.size(2);
  const torch::Tensor weight = layer->weight.view({-1, c, l}).transpose(1, 2).reshape({-1, l * c});
  return LinearLayer(h.transpose(1, 2).reshape({batch, l * c}), weight, layer->bias, /*relu=*/false);
}

// from_latent and ReLU on z: [B, latent] -> [B, c, l], in NWC memory when `nwc`.
torch::Tensor FromLatent(const torch::nn::Linear& layer, const torch::Tensor& z, int64_t c, int64_t l, bool nwc) {
  if (!nwc) return LinearLayer(layer, z, /*relu=*/true).view({z.size(0), c, l});
  const torch::Tensor weight = layer->weight.view({c, l, -1}).transpose(0, 1).reshape({l * c, -1});
  const torch::Tensor bias = layer->bias.view({c, l}).t().reshape({l * c});
  return LinearLayer(z, weight, bias, /*relu=*/true).view({z.size(0), l, c}).transpose(1, 2);
}

}  // namespace

VaeOutput VaeConv1dImpl::forward(const torch::Tensor& x, const torch::Tensor& eps) {
  const torch::Tensor channels_first = x.dim() == 2 ? x.unsqueeze(1) : x;  // [B, C, L]
  torch::Tensor h = channels_first;
  for (const auto& layer : encoder_layers_) h = Conv1dLayer(layer, h, /*relu=*/true);
  auto halves = ToLatent(to_latent_, h).chunk(2, /*dim=*/-1);
  torch::Tensor mu = halves[0];  // [B, latent]
  torch::Tensor logvar = halves[1];
  torch::Tensor z = eps.defined() ? Reparameterize(mu, logvar, eps) : mu;
  h = FromLatent(from_latent_, z, shape_.channels.back(), lengths_.back(), ChannelsLastMemory(h));
  for (size_t i = 0; i < decoder_layers_.size(); ++i) {
    h = ConvTranspose1dLayer(decoder_layers_[i], h, /*relu=*/i + 1 < decoder_layers_.size());
  }
  return {x.dim() == 2 ? h.squeeze(1) : h, mu, logvar};  // recon: [B, L] or [B, C, L]
}

}  // namespace ct
