#include "model/model_size.h"

#include <c10/util/accumulate.h>

#include <filesystem>

#include "model/vae_conv1d.h"

namespace ct {
namespace {

double Product(const std::vector<int64_t>& dims) { return static_cast<double>(c10::multiply_integers(dims)); }

// A Linear(in, out): weight and bias.
double LinearParameters(double in, double out) { return in * out + out; }

ModelSize VaeMlpSize(const ModelConfig& c, double length) {
  ModelSize size;
  double width = length;
  for (int64_t h : c.hidden) {  // encoder
    size.parameters += LinearParameters(width, static_cast<double>(h));
    size.multiply_adds += width * static_cast<double>(h);
    size.activation_floats += static_cast<double>(h);
    width = static_cast<double>(h);
  }
  const double latent = static_cast<double>(c.latent);
  size.parameters += LinearParameters(width, 2 * latent);
  size.multiply_adds += width * 2 * latent;
  width = latent;
  for (auto it = c.hidden.rbegin(); it != c.hidden.rend(); ++it) {  // decoder
    size.parameters += LinearParameters(width, static_cast<double>(*it));
    size.multiply_adds += width * static_cast<double>(*it);
    size.activation_floats += static_cast<double>(*it);
    width = static_cast<double>(*it);
  }
  size.parameters += LinearParameters(width, length);
  size.multiply_adds += width * length;
  size.activation_floats += 3 * latent + length;
  return size;
}

ModelSize VaeConv1dSize(const ModelConfig& c, const std::vector<int64_t>& row_dims) {
  ModelSize size;
  const Conv1dShape shape{row_dims, c.channels, c.kernel_size, c.stride, c.latent};
  const std::vector<int64_t> lengths = Conv1dLengths(row_dims.back(), shape);
  const double k = static_cast<double>(c.kernel_size);
  double in = row_dims.size() == 2 ? static_cast<double>(row_dims[0]) : 1;
  for (size_t i = 0; i < c.channels.size(); ++i) {
    const double out = static_cast<double>(c.channels[i]);
    // Conv1d(in, out) and its mirror ConvTranspose1d(out, in): weights in x out x k each.
    size.parameters += in * out * k + out + out * in * k + in;
    size.activation_floats += 2 * out * static_cast<double>(lengths[i + 1]);
    // Each weight of the pair is used once per position of the shorter side (length i+1).
    size.multiply_adds += 2 * in * out * k * static_cast<double>(lengths[i + 1]);
    in = out;
  }
  const double flat = static_cast<double>(c.channels.back()) * static_cast<double>(lengths.back());
  const double latent = static_cast<double>(c.latent);
  size.parameters += LinearParameters(flat, 2 * latent) + LinearParameters(latent, flat);
  size.multiply_adds += 3 * flat * latent;
  size.activation_floats += 3 * latent + Product(row_dims);
  return size;
}

}  // namespace

ModelSize EstimateModelSize(const ModelConfig& c, const std::vector<int64_t>& input_dims,
                            const std::vector<int64_t>& target_dims) {
  switch (c.kind) {
    case ModelKind::kVaeMlp:
      return VaeMlpSize(c, Product(input_dims));
    case ModelKind::kVaeConv1d:
      return VaeConv1dSize(c, input_dims);
    default: {
      // A TorchScript module: its file holds its parameters (float32 mostly); its layers are
      // unknown, so the activations are counted as one output row.
      std::error_code ec;
      const auto bytes = std::filesystem::file_size(c.path, ec);
      return {ec ? 0.0 : static_cast<double>(bytes) / 4, Product(target_dims)};
    }
  }
}

}  // namespace ct
