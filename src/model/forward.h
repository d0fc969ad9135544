// The one forward pass (and loss) of training, validation, predict and `bench step`, so that
// all four run the model alike: under bf16 autocast when the precision asks for it.
#pragma once

#include "data/batch.h"
#include "model/model.h"
#include "util/choices.h"

namespace ct {

// batch: [B, ...] rows of every field, on the model's device. Checks that the model returned a
// loss and its metrics (ConfigError otherwise: a TorchScript module that breaks the contract).
ModelOutput ForwardAndLoss(Model& model, const Batch& batch, Precision precision);

// [1 + metrics] float32 on the batch's device, detached: (loss, each metric's batch mean), what
// training records per step.
at::Tensor LossAndMetricMeans(const ModelOutput& out);

}  // namespace ct
