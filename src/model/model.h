// What the trainer needs of a model, whether built in (vae_mlp, vae_conv1d) or a TorchScript
// module from Python (model.kind: torchscript). Chosen in one factory (model/make_model.h).
#pragma once

#include <ATen/ATen.h>
#include <c10/core/Device.h>

#include <string>
#include <vector>

namespace ct {

struct VaeOutput {
  at::Tensor recon;   // [B, ...] like the target
  at::Tensor mu;      // [B, latent]; undefined for a plain autoencoder (no KL term)
  at::Tensor logvar;  // [B, latent]; undefined when mu is
};

// A parameter or buffer under the name Python's state_dict() gives it ("encoder.0.weight").
struct NamedTensor {
  std::string name;
  at::Tensor tensor;
  bool is_buffer = false;
};

class Model {
 public:
  virtual ~Model() = default;

  // A line for the start-up log.
  virtual std::string Describe() const = 0;
  // The architecture in one line: a checkpoint resumes only into a model with the same one.
  virtual std::string Fingerprint() const = 0;

  // x: [B, ...] one batch of input rows. In training mode a VAE samples z ~ N(mu, sigma)
  // (from LibTorch's generator, which the trainer seeds per step); in eval mode z = mu.
  virtual VaeOutput Forward(const at::Tensor& x) = 0;

  virtual void SetTraining(bool on) = 0;
  virtual void To(const c10::Device& device) = 0;

  virtual std::vector<at::Tensor> Parameters() = 0;
  // Parameters, then buffers, with Python's names: model.pt and checkpoints use them.
  virtual std::vector<NamedTensor> State() = 0;

  // Files beside model.pt that Python can load directly (TorchScript: the trained module).
  virtual void SaveArtifacts(const std::string& run_dir) const { (void)run_dir; }
};

}  // namespace ct
