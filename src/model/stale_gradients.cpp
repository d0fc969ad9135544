#include "model/stale_gradients.h"

#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "util/error.h"

namespace ct {
namespace {

// Which parameters' .grad is stale, keyed by the parameter's TensorImpl (a layer's backward sees
// the parameter itself among its saved tensors). Global because ClaimStaleGradient is called
// from inside autograd, which knows nothing of the StaleGradients that marked it; the lock is
// there because autograd may run backward on threads of its own (one per device).
struct Registry {
  struct Entry {
    at::Tensor param;
    bool stale = false;
  };
  std::mutex mutex;
  std::unordered_map<const c10::TensorImpl*, Entry> entries;
};

Registry& TheRegistry() {
  static Registry registry;
  return registry;
}

// Whether `incoming` may simply be copied over `grad`: both dense and of one shape, and no graph
// of the backward being built (then AccumulateGrad adds out of place, and so must we).
bool CanCopyOver(const at::Tensor& grad, const at::Tensor& incoming) {
  return !c10::GradMode::is_enabled() && !grad.is_sparse() && !incoming.is_sparse() && grad.sizes() == incoming.sizes();
}

// Replaces a stale .grad when AccumulateGrad would add a gradient into it: the gradient is copied
// over it (one pass, where zeroing and adding would be two) and AccumulateGrad is handed nothing
// to add, as when a layer wrote the gradient itself. Where a copy cannot stand in for the
// addition, the stale .grad is zeroed and AccumulateGrad adds as usual.
class ReplaceStaleOnAccumulation : public torch::autograd::FunctionPreHook {
 public:
  explicit ReplaceStaleOnAccumulation(const c10::TensorImpl* param) : param_(param) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& grads) override {
    if (grads.empty() || !grads[0].defined()) return grads;  // nothing to add: a layer wrote it
    Registry& registry = TheRegistry();
    std::lock_guard<std::mutex> lock(registry.mutex);
    auto it = registry.entries.find(param_);
    if (it == registry.entries.end() || !it->second.stale) return grads;
    it->second.stale = false;
    const at::Tensor& grad = it->second.param.grad();
    if (!grad.defined()) return grads;  // AccumulateGrad stores the new gradient
    const bool copy_over = CanCopyOver(grad, grads[0]);
    c10::NoGradGuard no_grad;
    if (!copy_over) {
      grad.zero_();
      return grads;
    }
    grad.copy_(grads[0]);
    return {at::Tensor()};
  }

 private:
  const c10::TensorImpl* param_;
};

}  // namespace

StaleGradients::StaleGradients(std::vector<at::Tensor> params) : params_(std::move(params)) {
  for (const at::Tensor& p : params_) {
    if (!p.requires_grad() || !p.is_leaf()) {
      throw Error("StaleGradients: every parameter must be a leaf that requires grad");
    }
  }
  Registry& registry = TheRegistry();
  {
    std::lock_guard<std::mutex> lock(registry.mutex);
    for (const at::Tensor& p : params_) {
      if (registry.entries.count(p.unsafeGetTensorImpl())) {
        throw Error("StaleGradients: a parameter is already tracked by another StaleGradients");
      }
    }
    for (const at::Tensor& p : params_) registry.entries[p.unsafeGetTensorImpl()] = Registry::Entry{p, false};
  }
  for (const at::Tensor& p : params_) {
    // std::shared_ptr in LibTorch 1.13, c10::intrusive_ptr in 2.x.
    const auto accumulator = torch::autograd::impl::grad_accumulator(p);
    auto hook = std::make_unique<ReplaceStaleOnAccumulation>(p.unsafeGetTensorImpl());
    const torch::autograd::FunctionPreHook* added = hook.get();
    accumulator->add_pre_hook(std::move(hook));
    hook_removers_.emplace_back(nullptr, [accumulator, added](void*) {
      auto& hooks = accumulator->pre_hooks();
      hooks.erase(std::remove_if(hooks.begin(), hooks.end(), [&](const auto& h) { return h.get() == added; }),
                  hooks.end());
    });
  }
}

StaleGradients::~StaleGradients() {
  hook_removers_.clear();
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  for (const at::Tensor& p : params_) registry.entries.erase(p.unsafeGetTensorImpl());
}

void StaleGradients::MarkAll() {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  for (const at::Tensor& p : params_) registry.entries.at(p.unsafeGetTensorImpl()).stale = true;
}

void StaleGradients::ZeroUnwritten() {
  c10::NoGradGuard no_grad;
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  for (const at::Tensor& p : params_) {
    Registry::Entry& entry = registry.entries.at(p.unsafeGetTensorImpl());
    if (!entry.stale) continue;
    entry.stale = false;
    if (p.grad().defined()) p.grad().zero_();
  }
}

bool ClaimStaleGradient(const at::Tensor& param) {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.entries.find(param.unsafeGetTensorImpl());
  if (it == registry.entries.end() || !it->second.stale) return false;
  it->second.stale = false;
  return true;
}

}  // namespace ct
