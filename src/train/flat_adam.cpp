#include "train/flat_adam.h"

#include <c10/core/GradMode.h>

#include <cmath>

#include "util/error.h"

namespace ct {

FlatAdam::FlatAdam(std::vector<at::Tensor> params, std::vector<GradientBucket> groups, AdamSettings settings)
    : params_(std::move(params)), settings_(settings) {
  c10::NoGradGuard no_grad;
  group_of_.assign(params_.size(), groups.size());
  offset_of_.assign(params_.size(), 0);
  for (size_t g = 0; g < groups.size(); ++g) {
    Group group;
    group.grads = groups[g].grads;
    group.params = at::empty_like(group.grads);
    int64_t offset = 0;
    for (size_t i : groups[g].params) {
      group_of_.at(i) = g;
      offset_of_[i] = offset;
      offset += params_[i].numel();
    }
    if (offset != group.grads.numel()) throw Error("FlatAdam: a group's parameters do not fill its gradient buffer");
    groups_.push_back(group);
    // The parameter's values move into the buffer, and the parameter becomes a view of it: the
    // model (and anything holding the parameter) sees the same tensor, now flat underneath.
    for (size_t i : groups[g].params) {
      at::Tensor place = View(group.params, i);
      place.copy_(params_[i]);
      params_[i].set_data(place);
    }
    groups_.back().exp_avg = at::zeros_like(group.grads);
    groups_.back().exp_avg_sq = at::zeros_like(group.grads);
    groups_.back().step = at::zeros({}, group.grads.options().dtype(at::kFloat));
  }
  fused_ = settings_.fused && !groups_.empty() && HasFusedKernel(groups_.front().grads.device()) &&
           groups_.front().grads.scalar_type() == at::kFloat;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (group_of_[i] == groups_.size()) throw Error("FlatAdam: a parameter belongs to no group");
  }
}

std::vector<GradientBucket> FlatAdam::OwnGradients(const std::vector<at::Tensor>& params) {
  GradientBucket group;
  int64_t elements = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    group.params.push_back(i);
    elements += params[i].numel();
  }
  group.grads = at::zeros({elements}, params.front().options().requires_grad(false));
  int64_t offset = 0;
  for (const at::Tensor& p : params) {
    at::Tensor grad = group.grads.narrow(0, offset, p.numel()).view(p.sizes());
    p.mutable_grad() = grad.detach();
    offset += p.numel();
  }
  return {group};
}

bool FlatAdam::HasFusedKernel(const c10::Device& device) {
  // _fused_adam_ came with LibTorch 2.0 for CUDA and 2.4 for CPU.
#if CT_LIBTORCH_MAJOR >= 2
  return device.is_cuda() || CT_LIBTORCH_MAJOR > 2 || CT_LIBTORCH_MINOR >= 4;
#else
  (void)device;
  return false;
#endif
}

// One kernel pass over each flat group: the moments and the parameters read and written once
// (the unfused update makes five passes). Lr: a double (eager) or a device scalar (a graph).
template <class Lr>
void FlatAdam::RunFusedKernel(const Lr& lr) {
#if CT_LIBTORCH_MAJOR >= 2
  std::vector<at::Tensor> params, grads, exp_avgs, exp_avg_sqs, steps;
  for (Group& g : groups_) {
    params.push_back(g.params);
    grads.push_back(g.grads);
    exp_avgs.push_back(g.exp_avg);
    exp_avg_sqs.push_back(g.exp_avg_sq);
    steps.push_back(g.step);
  }
  const AdamSettings& s = settings_;
  if (s.weight_decay > 0) {
    at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps, lr, s.beta1, s.beta2,
                      s.weight_decay, s.eps, /*amsgrad=*/false, /*maximize=*/false);
  } else {
    at::_fused_adam_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps, lr, s.beta1, s.beta2,
                     /*weight_decay=*/0.0, s.eps, /*amsgrad=*/false, /*maximize=*/false);
  }
#else
  (void)lr;
#endif
}

// Eager: the kernel's step count is set from steps_ (a fill, no host sync), so checkpoints keep
// one count and resume either way.
void FlatAdam::FusedStep(double lr) {
  for (Group& g : groups_) g.step.fill_(static_cast<double>(steps_));
  device_steps_set_ = true;
  RunFusedKernel(lr);
}

void FlatAdam::StepOnDevice(const at::Tensor& lr) {
  if (!fused_) throw Error("FlatAdam::StepOnDevice needs LibTorch's fused Adam kernel (LibTorch >= 2.4)");
  c10::NoGradGuard no_grad;
  // The count is set from the host once, outside any capture (the first step runs eagerly), and
  // from then on advanced by the step itself.
  if (!device_steps_set_) {
    for (Group& g : groups_) g.step.fill_(static_cast<double>(steps_));
    device_steps_set_ = true;
  }
  for (Group& g : groups_) g.step.add_(1);
  RunFusedKernel(lr);
}

at::Tensor FlatAdam::View(const at::Tensor& flat, size_t param) const {
  return flat.narrow(0, offset_of_[param], params_[param].numel()).view(params_[param].sizes());
}

at::Tensor FlatAdam::ExpAvg(size_t param) const { return View(groups_[group_of_[param]].exp_avg, param); }
at::Tensor FlatAdam::ExpAvgSq(size_t param) const { return View(groups_[group_of_[param]].exp_avg_sq, param); }

void FlatAdam::ZeroGrad() {
  for (Group& group : groups_) group.grads.zero_();
}

// torch.optim.Adam's single-tensor update (and AdamW's decay), elementwise over each flat group;
// or LibTorch's fused kernel (torch.optim.Adam(fused=True)) where it has one for the device.
void FlatAdam::Step(double lr) {
  c10::NoGradGuard no_grad;
  ++steps_;
  if (fused_) {
    FusedStep(lr);
    return;
  }
  const double b1 = settings_.beta1, b2 = settings_.beta2;
  const double bias_correction1 = 1 - std::pow(b1, static_cast<double>(steps_));
  const double bias_correction2_sqrt = std::sqrt(1 - std::pow(b2, static_cast<double>(steps_)));
  for (Group& g : groups_) {
    if (settings_.weight_decay > 0) g.params.mul_(1 - lr * settings_.weight_decay);
    g.exp_avg.mul_(b1).add_(g.grads, 1 - b1);
    g.exp_avg_sq.mul_(b2).addcmul_(g.grads, g.grads, 1 - b2);
    const at::Tensor denom = (g.exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(settings_.eps);
    g.params.addcdiv_(g.exp_avg, denom, -lr / bias_correction1);
  }
}

}  // namespace ct
