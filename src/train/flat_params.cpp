#include "train/flat_params.h"

#include <c10/core/GradMode.h>

#include "util/error.h"

namespace ct {

FlatParams::FlatParams(std::vector<at::Tensor> params, std::vector<GradientBucket> buckets,
                       std::vector<at::Tensor> storage, bool copy_values)
    : params_(std::move(params)) {
  c10::NoGradGuard no_grad;
  group_of_.assign(params_.size(), buckets.size());
  offset_of_.assign(params_.size(), 0);
  if (!storage.empty() && storage.size() != buckets.size()) {
    throw Error("optimizer: " + std::to_string(storage.size()) + " parameter buffers for " +
                std::to_string(buckets.size()) + " buckets");
  }
  for (size_t g = 0; g < buckets.size(); ++g) {
    Group group;
    group.grads = buckets[g].grads;
    group.params = storage.empty() ? at::empty_like(group.grads) : storage[g];
    if (group.params.sizes() != group.grads.sizes() || group.params.dtype() != group.grads.dtype()) {
      throw Error("optimizer: a bucket's parameter buffer differs from its gradient buffer in size or dtype");
    }
    int64_t offset = 0;
    for (size_t i : buckets[g].params) {
      group_of_.at(i) = g;
      offset_of_[i] = offset;
      offset += params_[i].numel();
    }
    if (offset != group.grads.numel()) throw Error("optimizer: a bucket's parameters do not fill its gradient buffer");
    groups_.push_back(group);
    // The parameter's values move into the buffer, and the parameter becomes a view of it: the
    // model (and anything holding the parameter) sees the same tensor, now flat underneath.
    for (size_t i : buckets[g].params) {
      at::Tensor place = View(group.params, i);
      if (copy_values) place.copy_(params_[i]);
      params_[i].set_data(place);
    }
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    if (group_of_[i] == groups_.size()) throw Error("optimizer: a parameter belongs to no bucket");
  }
}

at::Tensor FlatParams::View(const at::Tensor& flat, size_t param) const {
  return flat.narrow(0, offset_of_[param], params_[param].numel()).view(params_[param].sizes());
}

std::vector<at::Tensor> FlatParams::ZerosPerGroup() const {
  std::vector<at::Tensor> zeros;
  for (const Group& g : groups_) zeros.push_back(at::zeros_like(g.grads));
  return zeros;
}

std::vector<GradientBucket> OwnGradients(const std::vector<at::Tensor>& params) {
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

}  // namespace ct
