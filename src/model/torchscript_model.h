// model.kind: torchscript -- a module scripted or traced in Python, trained like a built-in
// model: its parameters broadcast, their gradients all-reduced in buckets, Adam steps them.
//
// Calling conventions (README "Bring your own model"):
//   forward(self, batch: Dict[str, Tensor]) -> Dict[str, Tensor]     (any model)
//       batch: every field of data.fields, [B, ...] each. The result holds a scalar "loss" (the
//       batch mean, what training differentiates); its other scalar entries are metrics
//       (recorded as train/<name> and val/<name>), its entries with the batch's first
//       dimension are outputs (predict writes them). Nothing else may be in it.
//   forward(self, x) with x = batch["input"], returning one of (VAEs; loss against "target")
//       Tensor                         the reconstruction, shaped like the target rows: loss = MSE
//       Tuple[Tensor, Tensor, Tensor]  (recon, mu, logvar): loss = MSE + model.beta * KL
//       Dict[str, Tensor]              {"recon": ..., and optionally "mu": ..., "logvar": ...}
// In training mode a VAE samples its latent itself (torch.randn_like: LibTorch's generator,
// which clustertrain seeds per step and rank); in eval mode (self.training is False:
// validation, predict) it should return z = mu.
#pragma once

#include <torch/script.h>

#include <string>
#include <vector>

#include "model/model.h"

namespace ct {

class TorchScriptModel : public Model {
 public:
  // Loads `path` and checks its calling convention on a probe batch of two zero rows of
  // `fields`; throws ConfigError saying what the module does wrong and how to fix it.
  TorchScriptModel(const std::string& path, const std::vector<FieldDims>& fields, double beta);

  std::string Describe() const override;
  std::string Fingerprint() const override { return fingerprint_; }
  std::vector<std::string> MetricNames() const override { return metric_names_; }
  ModelOutput Forward(const Batch& batch, Precision precision) override;
  std::optional<double> LossFromMetricSums(const std::vector<double>& sums, double rows) const override;
  void SetTraining(bool on) override { module_.train(on); }
  void To(const c10::Device& device) override { module_.to(device); }
  std::vector<at::Tensor> Parameters() override;
  std::vector<NamedTensor> State() override;
  // model.ts: the trained module, loadable with torch.jit.load.
  void SaveArtifacts(const std::string& run_dir) const override;

 private:
  void LoadAndFingerprint();
  void Probe(const std::vector<FieldDims>& fields);
  ModelOutput UnpackDict(const c10::IValue& out, int64_t rows, bool probing);
  VaeOutput UnpackVae(const c10::IValue& out) const;

  std::string path_;
  double beta_;
  bool dict_contract_ = false;  // forward(batch: Dict[str, Tensor]) -> Dict[str, Tensor]
  std::vector<std::string> metric_names_;
  torch::jit::Module module_;
  // An untouched copy with storages of its own, the mould of model.ts: the trained module's
  // parameters become views of the optimizer's flat buffers (train/flat_adam.h), and TorchScript
  // (deepcopy, the serializer) takes views of one storage for one tensor.
  torch::jit::Module mould_;
  std::string fingerprint_;
  int64_t frozen_ = 0;  // parameters with requires_grad=False: not trained
  bool probed_ = false;
};

}  // namespace ct
