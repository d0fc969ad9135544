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
  }
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

at::Tensor FlatAdam::View(const at::Tensor& flat, size_t param) const {
  return flat.narrow(0, offset_of_[param], params_[param].numel()).view(params_[param].sizes());
}

at::Tensor FlatAdam::ExpAvg(size_t param) const { return View(groups_[group_of_[param]].exp_avg, param); }
at::Tensor FlatAdam::ExpAvgSq(size_t param) const { return View(groups_[group_of_[param]].exp_avg_sq, param); }

void FlatAdam::ZeroGrad() {
  for (Group& group : groups_) group.grads.zero_();
}

// torch.optim.Adam's single-tensor update (and AdamW's decay), elementwise over each flat group.
void FlatAdam::Step(double lr) {
  c10::NoGradGuard no_grad;
  ++steps_;
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
