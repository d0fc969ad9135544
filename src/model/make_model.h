// The one place that builds the model named by model.kind.
#pragma once

#include <memory>
#include <vector>

#include "model/model.h"
#include "util/config.h"

namespace ct {

// input_dims / target_dims: one row's shape ({L} or {C, L}). Throws ConfigError when the model
// does not fit the rows (e.g. vae_mlp on rows of another shape than the target's).
std::unique_ptr<Model> MakeModel(const ModelConfig& config, const std::vector<int64_t>& input_dims,
                                 const std::vector<int64_t>& target_dims);

}  // namespace ct
