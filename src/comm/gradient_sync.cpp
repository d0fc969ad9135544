#include "comm/gradient_sync.h"

#include <c10/core/GradMode.h>

#include "util/error.h"

namespace ct {

GradientSync::GradientSync(std::vector<at::Tensor> parameters, Communicator& comm)
    : parameters_(std::move(parameters)), comm_(comm) {
  if (parameters_.empty()) throw Error("GradientSync: the model has no parameters");
  int64_t total = 0;
  for (const auto& p : parameters_) {
    if (p.scalar_type() != parameters_.front().scalar_type() || p.device() != parameters_.front().device()) {
      throw Error("GradientSync: all parameters must share one dtype and device");
    }
    total += p.numel();
  }
  flat_ = at::zeros({total}, parameters_.front().options());
}

void GradientSync::BroadcastParameters() {
  c10::NoGradGuard no_grad;
  int64_t offset = 0;
  for (const auto& p : parameters_) {
    flat_.narrow(0, offset, p.numel()).copy_(p.reshape({-1}));
    offset += p.numel();
  }
  comm_.Broadcast(flat_, /*root=*/0);
  offset = 0;
  for (auto& p : parameters_) {
    p.copy_(flat_.narrow(0, offset, p.numel()).view(p.sizes()));
    offset += p.numel();
  }
}

void GradientSync::AverageGradients() {
  c10::NoGradGuard no_grad;
  int64_t offset = 0;
  for (const auto& p : parameters_) {
    auto slot = flat_.narrow(0, offset, p.numel());
    if (p.grad().defined()) {
      slot.copy_(p.grad().reshape({-1}));
    } else {
      slot.zero_();
    }
    offset += p.numel();
  }
  comm_.AllReduceAverage(flat_);
  offset = 0;
  for (auto& p : parameters_) {
    auto averaged = flat_.narrow(0, offset, p.numel()).view(p.sizes());
    if (p.grad().defined()) {
      p.mutable_grad().copy_(averaged);
    } else {
      p.mutable_grad() = averaged.clone();
    }
    offset += p.numel();
  }
}

}  // namespace ct
