// model.pt: the model's state dict (parameters and buffers by name) in the pickle format that
// Python's torch.load reads: `torch.load("model.pt")` gives {"encoder.0.weight": tensor, ...}.
#pragma once

#include <ATen/core/Dict.h>

#include <string>
#include <vector>

#include "model/model.h"

namespace ct {

// Written atomically (temporary file, fsync, rename). Tensors are copied to the CPU.
void SaveStateDict(const std::vector<NamedTensor>& state, const std::string& path);

// Reads a file written by SaveStateDict (or Python's torch.save of a dict of tensors).
c10::Dict<std::string, at::Tensor> LoadStateDict(const std::string& path);

}  // namespace ct
