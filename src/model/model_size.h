// What a model will hold before it is built, so that a model or batch that cannot fit is refused
// with numbers instead of failing inside LibTorch's allocator (model.hidden=[1000000000] would
// ask for a terabyte on the first Linear's construction).
#pragma once

#include <vector>

#include "util/config.h"

namespace ct {

struct ModelSize {
  double parameters = 0;         // trainable values
  double activation_floats = 0;  // per row: the forward's layer outputs, a lower bound
  double multiply_adds = 0;      // per row: the forward's matrix and convolution products (0: unknown)
};

// Exact parameter counts for the built-in models (the same layers vae_mlp.cpp and vae_conv1d.cpp
// build); a TorchScript file's size over 4 bytes for its parameters. Doubles: the point is to
// catch sizes that overflow anything smaller. input_dims / target_dims: one row's shape.
ModelSize EstimateModelSize(const ModelConfig& config, const std::vector<int64_t>& input_dims,
                            const std::vector<int64_t>& target_dims);

}  // namespace ct
