#include "model/make_model.h"

#include "model/builtin_model.h"
#include "model/torchscript_model.h"
#include "model/vae_conv1d.h"
#include "model/vae_mlp.h"
#include "util/error.h"

namespace ct {
namespace {

std::string Join(const std::vector<int64_t>& values) {
  std::string s;
  for (int64_t v : values) s += (s.empty() ? "" : ",") + std::to_string(v);
  return s;
}

}  // namespace

std::unique_ptr<Model> MakeModel(const ModelConfig& c, const std::vector<int64_t>& input_dims,
                                 const std::vector<int64_t>& target_dims) {
  if (c.kind == ModelKind::kTorchScript) return std::make_unique<TorchScriptModel>(c.path, input_dims, target_dims);
  const std::string rows = "[" + Join(input_dims) + "]";
  if (input_dims != target_dims) {
    throw ConfigError("model.kind=" + std::string(NameOf(c.kind)) + " reconstructs its input, but input rows are " +
                      rows + " and target rows [" + Join(target_dims) +
                      "]; use rows of one shape, or a TorchScript model "
                      "(model.kind=torchscript)");
  }
  if (c.kind == ModelKind::kVaeMlp) {
    if (input_dims.size() != 1) {
      throw ConfigError("model.kind=vae_mlp takes rows [L], but the rows are " + rows +
                        "; use model.kind=vae_conv1d for rows [C, L]");
    }
    return std::make_unique<BuiltinModel<VaeMlp>>("vae_mlp length=" + std::to_string(input_dims[0]) + " hidden=" +
                                                      Join(c.hidden) + " latent=" + std::to_string(c.latent),
                                                  VaeMlp(input_dims[0], c.hidden, c.latent), c.latent);
  }
  if (c.kind == ModelKind::kVaeConv1d) {
    if (input_dims.empty() || input_dims.size() > 2) {
      throw ConfigError("model.kind=vae_conv1d takes rows [L] or [C, L], but the rows are " + rows);
    }
    const Conv1dShape shape{input_dims, c.channels, c.kernel_size, c.stride, c.latent};
    // Padding k/2 keeps every length >= 1, however many layers.
    const std::vector<int64_t> lengths = Conv1dLengths(input_dims.back(), shape);
    return std::make_unique<BuiltinModel<VaeConv1d>>(
        "vae_conv1d rows=" + rows + " channels=" + Join(c.channels) + " kernel=" + std::to_string(c.kernel_size) +
            " stride=" + std::to_string(c.stride) + " latent=" + std::to_string(c.latent) + " (lengths " +
            Join(lengths) + ")",
        VaeConv1d(shape), c.latent);
  }
  throw ConfigError("model.kind='" + std::string(NameOf(c.kind)) + "' is not a model clustertrain knows");
}

}  // namespace ct
