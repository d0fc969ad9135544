#include "model/forward.h"

#include "model/precision.h"

namespace ct {

VaeOutput ForwardPass(Model& model, const at::Tensor& x, Precision precision) {
  // Backward runs outside the scope, as in PyTorch.
  const AutocastScope autocast(precision == Precision::kBf16, x.device().type());
  return model.Forward(x);
}

LossTerms ForwardAndLoss(Model& model, const Batch& batch, double beta, Precision precision) {
  LossTerms loss;
  loss.per_sample = VaePerSampleLoss(ForwardPass(model, batch.input, precision), batch.target);
  loss.total = VaeBatchLoss(loss.per_sample, beta);
  return loss;
}

}  // namespace ct
