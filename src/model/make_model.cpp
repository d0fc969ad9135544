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

std::vector<int64_t> FieldShape(const std::vector<FieldDims>& fields, const std::string& name, const char* kind) {
  for (const FieldDims& f : fields) {
    if (f.name == name) return f.dims;
  }
  throw ConfigError(std::string("model.kind=") + kind +
                    " trains on the batch fields 'input' and 'target', but the "
                    "batch has " +
                    DescribeFields(fields) +
                    "; map them in data.fields (e.g. {input: strain, target: "
                    "clean}), or use a TorchScript model whose forward takes the batch as a dict");
}

std::vector<int64_t> CheckRowsFitModel(const ModelConfig& c, const std::vector<FieldDims>& fields) {
  const std::vector<int64_t> input_dims = FieldShape(fields, "input", NameOf(c.kind));
  // Predict's file may hold no target: the model is then shaped by its input alone.
  bool has_target = false;
  for (const FieldDims& f : fields) has_target = has_target || f.name == "target";
  const std::vector<int64_t> target_dims = has_target ? FieldShape(fields, "target", NameOf(c.kind)) : input_dims;
  const std::string rows = "[" + Join(input_dims) + "]";
  if (input_dims != target_dims) {
    throw ConfigError("model.kind=" + std::string(NameOf(c.kind)) + " reconstructs its input, but input rows are " +
                      rows + " and target rows [" + Join(target_dims) +
                      "]; use rows of one shape, or a TorchScript model "
                      "(model.kind=torchscript)");
  }
  // A dataset [N] has rows of one value each: the fix is in the file, not the model kind.
  const std::string single_values =
      input_dims.empty() ? " (one value per row: the dataset is [N]); store each row's L values, as [N, L]" : "";
  if (c.kind == ModelKind::kVaeMlp && input_dims.size() != 1) {
    throw ConfigError("model.kind=vae_mlp takes rows [L], but the rows are " + rows +
                      (input_dims.empty()       ? single_values
                       : input_dims.size() == 2 ? "; use model.kind=vae_conv1d for rows [C, L]"
                                                : "; store the rows as [N, L] or [N, C, L] (model.kind=vae_conv1d), "
                                                  "or train a TorchScript model (model.kind=torchscript)"));
  }
  if (c.kind == ModelKind::kVaeConv1d && (input_dims.empty() || input_dims.size() > 2)) {
    throw ConfigError("model.kind=vae_conv1d takes rows [L] or [C, L], but the rows are " + rows +
                      (input_dims.empty() ? single_values
                                          : "; store the rows as [N, C, L] (channels first), or train a TorchScript "
                                            "model (model.kind=torchscript)"));
  }
  return input_dims;
}

std::unique_ptr<Model> MakeModel(const ModelConfig& c, const std::vector<FieldDims>& fields) {
  if (c.kind == ModelKind::kTorchScript) return std::make_unique<TorchScriptModel>(c.path, fields, c.beta);
  const std::vector<int64_t> input_dims = CheckRowsFitModel(c, fields);
  if (c.kind == ModelKind::kVaeMlp) {
    return std::make_unique<BuiltinModel<VaeMlp>>("vae_mlp length=" + std::to_string(input_dims[0]) + " hidden=" +
                                                      Join(c.hidden) + " latent=" + std::to_string(c.latent),
                                                  VaeMlp(input_dims[0], c.hidden, c.latent), c.latent, c.beta);
  }
  if (c.kind == ModelKind::kVaeConv1d) {
    const std::string rows = "[" + Join(input_dims) + "]";
    const Conv1dShape shape{input_dims, c.channels, c.kernel_size, c.stride, c.latent};
    // Padding k/2 keeps every length >= 1, however many layers.
    const std::vector<int64_t> lengths = Conv1dLengths(input_dims.back(), shape);
    return std::make_unique<BuiltinModel<VaeConv1d>>(
        "vae_conv1d rows=" + rows + " channels=" + Join(c.channels) + " kernel=" + std::to_string(c.kernel_size) +
            " stride=" + std::to_string(c.stride) + " latent=" + std::to_string(c.latent) + " (lengths " +
            Join(lengths) + ")",
        VaeConv1d(shape), c.latent, c.beta);
  }
  throw ConfigError("model.kind='" + std::string(NameOf(c.kind)) + "' is not a model clustertrain knows");
}

}  // namespace ct
