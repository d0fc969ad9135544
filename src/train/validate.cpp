#include "train/validate.h"

#include <c10/core/GradMode.h>

#include <algorithm>

#include "model/forward.h"
#include "util/heartbeat.h"

namespace ct {

ValLoss Validate(Model& model, const ShardLoader& val, double beta, Precision precision, Communicator& comm) {
  c10::NoGradGuard no_grad;
  model.SetTraining(false);
  constexpr int64_t kValBatch = 1024;
  const c10::Device device = model.Parameters()[0].device();
  // (sum of mse, sum of kl, rows) on the device; one copy to the host after the all-reduce.
  at::Tensor sums = at::zeros({3}, at::TensorOptions().dtype(at::kDouble).device(device));
  for (int64_t begin = 0; begin < val.Rows(); begin += kValBatch) {
    Heartbeat();  // a long validation pass is progress too
    const int64_t count = std::min(kValBatch, val.Rows() - begin);
    const PerSampleLoss loss = ForwardAndLoss(model, val.Rows(begin, count), beta, precision).per_sample;
    sums[0] += loss.mse.sum().to(at::kDouble);
    sums[1] += loss.kl.sum().to(at::kDouble);
  }
  sums[2] += static_cast<double>(val.Rows());
  comm.AllReduceSum(sums);
  at::Tensor host = sums.cpu();
  model.SetTraining(true);
  const double* s = host.data_ptr<double>();
  const double n = std::max(s[2], 1.0);
  return {(s[0] + beta * s[1]) / n, s[0] / n, s[1] / n};
}

}  // namespace ct
