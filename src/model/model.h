// What the trainer needs of a model, whether built in (vae_mlp, vae_conv1d) or a TorchScript
// module from Python (model.kind: torchscript). Chosen in one factory (model/make_model.h).
//
// The contract every model keeps (README, "Any model"): it takes a batch of named fields and
// returns a scalar loss (the batch mean, what training differentiates), named metrics, and
// batched outputs (what predict writes). Nothing outside the model knows what a metric means.
#pragma once

#include <ATen/ATen.h>
#include <c10/core/Device.h>

#include <optional>
#include <string>
#include <vector>

#include "data/batch.h"
#include "util/choices.h"

namespace ct {

// A VAE network's forward (the built-in networks, and TorchScript modules of the VAE
// conventions); model/vae_loss.h turns it into a loss.
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

// One forward pass's results.
struct ModelOutput {
  at::Tensor loss;  // []: the batch mean; undefined when the batch lacks what the loss needs (predict)
  // In MetricNames() order: [] the batch mean, or [B] one value per row (summed exactly over a
  // dataset). Undefined with the loss.
  std::vector<at::Tensor> metrics;
  std::vector<std::string> output_names;  // what predict writes, each a dataset of that name
  std::vector<at::Tensor> outputs;        // [B, ...] each
};

class Model {
 public:
  virtual ~Model() = default;

  // A line for the start-up log.
  virtual std::string Describe() const = 0;
  // The architecture in one line: a checkpoint resumes only into a model with the same one.
  virtual std::string Fingerprint() const = 0;

  // The metrics every Forward returns, in order ("mse", "kl" for a VAE).
  virtual std::vector<std::string> MetricNames() const = 0;

  // batch: [B, ...] rows of every field, on the model's device. In training mode a VAE samples
  // z ~ N(mu, sigma) (from LibTorch's generator, which the trainer seeds per step); in eval mode
  // z = mu. precision bf16: the network runs under autocast (model/precision.h).
  virtual ModelOutput Forward(const Batch& batch, Precision precision) = 0;

  // A dataset's loss from its metrics' sums over `rows` rows, where the loss is a fixed
  // combination of metrics (a VAE's mse + beta kl): validation then reduces the metrics alone.
  // nullopt: the loss is reduced as a (sum, count) of its own.
  virtual std::optional<double> LossFromMetricSums(const std::vector<double>& sums, double rows) const {
    (void)sums;
    (void)rows;
    return std::nullopt;
  }

  virtual void SetTraining(bool on) = 0;
  virtual void To(const c10::Device& device) = 0;

  virtual std::vector<at::Tensor> Parameters() = 0;
  // Parameters, then buffers, with Python's names: model.pt and checkpoints use them.
  virtual std::vector<NamedTensor> State() = 0;

  // Files beside model.pt that Python can load directly (TorchScript: the trained module).
  virtual void SaveArtifacts(const std::string& run_dir) const { (void)run_dir; }
};

}  // namespace ct
