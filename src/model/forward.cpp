#include "model/forward.h"

#include "util/error.h"

namespace ct {

ModelOutput ForwardAndLoss(Model& model, const Batch& batch, Precision precision) {
  ModelOutput out = model.Forward(batch, precision);
  if (!out.loss.defined()) {
    throw ConfigError("the model computed no loss on a batch of fields " + [&] {
      std::string names;
      for (const std::string& n : batch.names) names += (names.empty() ? "'" : ", '") + n + "'";
      return names;
    }() + ": a VAE needs the field 'target' (data.fields)");
  }
  return out;
}

at::Tensor LossAndMetricMeans(const ModelOutput& out) {
  std::vector<at::Tensor> values;
  values.reserve(1 + out.metrics.size());
  values.push_back(out.loss.detach());
  for (const at::Tensor& m : out.metrics) values.push_back((m.dim() == 0 ? m : m.mean()).detach());
  return at::stack(values);
}

}  // namespace ct
