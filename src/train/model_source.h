// What `predict --checkpoint PATH` names: a checkpoint (output.dir/checkpoints/*.pt, its config
// inside), or the weights a run directory holds for torch.load (output.dir/model.pt, best.pt:
// state dicts), whose model the run's config.yaml beside them describes. The run's last log line
// points at output.dir/best.pt, so that is the file users reach for first.
#pragma once

#include <ATen/core/Dict.h>

#include <optional>
#include <string>

#include "model/model.h"

namespace ct {

struct ModelSource {
  std::string config_yaml;
  std::string config_origin;                                  // "the config in checkpoint 'x'", for errors
  std::optional<c10::Dict<std::string, at::Tensor>> weights;  // a state dict's tensors; else the checkpoint's
};

// Throws the checkpoint's own error where PATH is neither (damaged, not a ZIP archive), and a
// ConfigError for a state dict without a config.yaml beside it.
ModelSource ReadModelSource(const std::string& path);

// model <- `weights` by name, every tensor of the model present with its shape and nothing else
// (ConfigError naming the tensor, ending in `mismatch_fix`).
void LoadWeights(const c10::Dict<std::string, at::Tensor>& weights, Model& model, const std::string& path,
                 const std::string& mismatch_fix);

}  // namespace ct
