// SGD with momentum over flat parameter buffers (train/flat_params.h): torch.optim.SGD's
// single-tensor update (no dampening, not Nesterov), elementwise over each flat group:
//   d = grad + weight_decay * p
//   buf = d on the first step, else momentum * buf + d      (momentum > 0)
//   p -= lr * buf                                           (p -= lr * d without momentum)
#pragma once

#include "train/flat_params.h"
#include "train/optimizer.h"

namespace ct {

class FlatSgd : public Optimizer {
 public:
  FlatSgd(std::vector<at::Tensor> params, std::vector<GradientBucket> groups, double momentum, double weight_decay);

  std::string Describe() const override;
  void ZeroGrad() override;
  void Step(double lr) override;
  // The first step differs from the rest (the buffer starts as the gradient), which a replayed
  // graph cannot tell apart: not captured.
  bool Capturable() const override { return false; }
  void StepOnDevice(const at::Tensor& lr) override;
  void CountStep() override { ++steps_; }

  int64_t Steps() const override { return steps_; }
  void SetSteps(int64_t steps) override { steps_ = steps; }
  const char* CheckpointKey() const override { return "sgd"; }
  std::vector<std::string> StateNames() const override { return {"momentum_buffer"}; }
  at::Tensor State(size_t param, size_t name) const override;
  const std::vector<at::Tensor>& Params() const override { return flat_.Params(); }

 private:
  FlatParams flat_;
  double momentum_, weight_decay_;
  std::vector<at::Tensor> buffer_;  // per group, flat: the momentum buffer
  int64_t steps_ = 0;
};

}  // namespace ct
