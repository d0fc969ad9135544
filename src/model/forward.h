// The one forward pass (and loss) of training, validation, predict and `bench step`, so that
// all four run the model alike: under bf16 autocast when the precision asks for it.
#pragma once

#include "data/batch.h"
#include "model/model.h"
#include "model/vae_loss.h"
#include "util/choices.h"

namespace ct {

// x: [B, ...] one batch of input rows, on the model's device.
VaeOutput ForwardPass(Model& model, const at::Tensor& x, Precision precision);

struct LossTerms {
  PerSampleLoss per_sample;  // mse, kl: [B], in float32
  at::Tensor total;          // scalar: mean mse + beta x mean kl, what training differentiates
};

// The batch's VAE loss (model/vae_loss.h) after ForwardPass of its input.
LossTerms ForwardAndLoss(Model& model, const Batch& batch, double beta, Precision precision);

}  // namespace ct
