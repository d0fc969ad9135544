#include "train/flat_sgd.h"

#include <c10/core/GradMode.h>
#include <fmt/format.h>

#include "util/error.h"

namespace ct {

FlatSgd::FlatSgd(std::vector<at::Tensor> params, std::vector<GradientBucket> groups, double momentum,
                 double weight_decay)
    : flat_(std::move(params), std::move(groups)), momentum_(momentum), weight_decay_(weight_decay) {
  buffer_ = flat_.ZerosPerGroup();
}

std::string FlatSgd::Describe() const {
  return fmt::format("SGD (momentum {}{}) over {} flat buffer(s)", momentum_,
                     weight_decay_ > 0 ? fmt::format(", L2 weight decay {}", weight_decay_) : "",
                     flat_.Groups().size());
}

void FlatSgd::ZeroGrad() {
  for (FlatParams::Group& group : flat_.Groups()) group.grads.zero_();
}

void FlatSgd::Step(double lr) {
  c10::NoGradGuard no_grad;
  for (size_t i = 0; i < flat_.Groups().size(); ++i) {
    FlatParams::Group& g = flat_.Groups()[i];
    at::Tensor d = weight_decay_ > 0 ? g.grads.add(g.params, weight_decay_) : g.grads;
    if (momentum_ > 0) {
      if (steps_ == 0) {
        buffer_[i].copy_(d);
      } else {
        buffer_[i].mul_(momentum_).add_(d);
      }
      d = buffer_[i];
    }
    g.params.add_(d, -lr);
  }
  ++steps_;
}

void FlatSgd::StepOnDevice(const at::Tensor& /*lr*/) {
  throw Error("FlatSgd::StepOnDevice: SGD is not captured in a CUDA graph (Capturable() is false)");
}

at::Tensor FlatSgd::State(size_t param, size_t /*name*/) const {
  return flat_.View(buffer_[flat_.GroupOf(param)], param);
}

}  // namespace ct
