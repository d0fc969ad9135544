#include "train/validate.h"

#include <c10/core/GradMode.h>

#include <algorithm>

#include "model/forward.h"
#include "util/heartbeat.h"

namespace ct {
namespace {

// A batch's sum of a value given per row ([B]) or as the batch's mean ([]), in float64.
at::Tensor RowSum(const at::Tensor& value, int64_t rows) {
  if (value.dim() == 0) return value.to(at::kDouble) * static_cast<double>(rows);
  return value.sum().to(at::kDouble);
}

}  // namespace

ValResult Validate(Model& model, const ShardLoader& val, Precision precision, Communicator& comm) {
  c10::NoGradGuard no_grad;
  model.SetTraining(false);
  constexpr int64_t kValBatch = 1024;
  const c10::Device device = model.Parameters()[0].device();
  const size_t metrics = model.MetricNames().size();
  // (each metric's sum, the loss's sum, rows) on the device; one copy to the host after the
  // all-reduce.
  at::Tensor sums =
      at::zeros({static_cast<int64_t>(metrics) + 2}, at::TensorOptions().dtype(at::kDouble).device(device));
  for (int64_t begin = 0; begin < val.Rows(); begin += kValBatch) {
    Heartbeat();  // a long validation pass is progress too
    const int64_t count = std::min(kValBatch, val.Rows() - begin);
    const ModelOutput out = ForwardAndLoss(model, val.Rows(begin, count), precision);
    for (size_t m = 0; m < metrics; ++m) sums[static_cast<int64_t>(m)] += RowSum(out.metrics[m], count);
    sums[static_cast<int64_t>(metrics)] += RowSum(out.loss, count);
  }
  sums[static_cast<int64_t>(metrics) + 1] += static_cast<double>(val.Rows());
  comm.AllReduceSum(sums);
  at::Tensor host = sums.cpu();
  model.SetTraining(true);
  const double* s = host.data_ptr<double>();
  const double n = std::max(s[metrics + 1], 1.0);
  ValResult result;
  const std::vector<double> metric_sums(s, s + metrics);
  for (double sum : metric_sums) result.metrics.push_back(sum / n);
  result.loss = model.LossFromMetricSums(metric_sums, n).value_or(s[metrics] / n);
  return result;
}

}  // namespace ct
