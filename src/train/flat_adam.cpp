#include "train/flat_adam.h"

#include <c10/core/GradMode.h>

#include <cmath>

#include "train/adam_cpu.h"
#include "util/error.h"
#include "util/parallel_for.h"

namespace ct {

namespace {

enum class Kernel { kFused, kOnePass, kPasses };

// LibTorch's fused kernel where asked for and it has one; else our one pass over contiguous
// float32 CPU buffers (the parameters' flat buffers are made like the gradients'); else ATen's passes.
Kernel ChooseKernel(const std::vector<GradientBucket>& groups, const AdamSettings& settings) {
  if (groups.empty()) return Kernel::kPasses;
  const at::Tensor& first = groups.front().grads;
  if (settings.fused && FlatAdam::HasFusedKernel(first.device()) && first.scalar_type() == at::kFloat) {
    return Kernel::kFused;
  }
  bool one_pass = settings.one_pass;
  for (const GradientBucket& g : groups) {
    one_pass = one_pass && g.grads.device().is_cpu() && g.grads.scalar_type() == at::kFloat && g.grads.is_contiguous();
  }
  return one_pass ? Kernel::kOnePass : Kernel::kPasses;
}

// Collective over the node's ranks: per group its parameters, then its first moments, then its
// second moments, in memory they all map; none where that cannot be had (node.why_not says why).
NodeSharedBuffers MapNodeState(const std::vector<GradientBucket>& groups, Communicator& node) {
  std::vector<int64_t> numels;
  for (int kind = 0; kind < 3; ++kind) {
    for (const GradientBucket& g : groups) numels.push_back(g.grads.numel());
  }
  return node.NodeSharedZeros(numels);
}

}  // namespace

FlatAdam::FlatAdam(std::vector<at::Tensor> params, std::vector<GradientBucket> groups, AdamSettings settings)
    : settings_(settings),
      fused_(ChooseKernel(groups, settings) == Kernel::kFused),
      one_pass_(ChooseKernel(groups, settings) == Kernel::kOnePass),
      sharded_(one_pass_ && settings.shard_over != nullptr && settings.shard_over->Size() > 1),
      node_(sharded_ && settings.node_shared ? MapNodeState(groups, *settings.shard_over) : NodeSharedBuffers{}),
      // Shared: the node's first rank copies the values in, the others find them there.
      flat_(std::move(params), groups, SharedPart(0), !Shared() || settings.shard_over->Rank() == 0) {
  exp_avg_ = Shared() ? SharedPart(1) : flat_.ZerosPerGroup();
  exp_avg_sq_ = Shared() ? SharedPart(2) : flat_.ZerosPerGroup();
  for (const FlatParams::Group& g : flat_.Groups()) step_.push_back(at::zeros({}, g.grads.options().dtype(at::kFloat)));
  if (Shared()) settings_.shard_over->Barrier();  // no rank reads the parameters before they are there
}

std::vector<at::Tensor> FlatAdam::SharedPart(size_t kind) const {
  if (!Shared()) return {};
  const size_t groups = node_.buffers.size() / 3;
  return {node_.buffers.begin() + static_cast<std::ptrdiff_t>(kind * groups),
          node_.buffers.begin() + static_cast<std::ptrdiff_t>((kind + 1) * groups)};
}

std::string FlatAdam::SplitDescription() const {
  const std::string n = std::to_string(settings_.shard_over->Size());
  if (Shared()) {
    return ", split over the node's " + n + " ranks (each updates 1/" + n +
           " in place: the parameters and moments are kept once per node, in shared memory)";
  }
  return ", split over the node's " + n + " ranks (each updates 1/" + n + ", then they all-gather the parameters" +
         (settings_.node_shared ? "; no shared memory: " + node_.why_not : "") + ")";
}

std::string FlatAdam::Describe() const {
  const bool decay = settings_.weight_decay > 0;
  return std::string(decay && settings_.decoupled ? "AdamW" : "Adam") +
         (decay && !settings_.decoupled ? " (L2 weight decay)" : "") + " over " +
         std::to_string(flat_.Groups().size()) + " flat buffer(s), " +
         (fused_      ? "LibTorch's fused kernel"
          : one_pass_ ? "one vectorised pass over the buffers on the rank's threads"
                      : "five vectorised passes (no fused kernel here)") +
         (sharded_ ? SplitDescription() : "");
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
  std::vector<at::Tensor> params, grads;
  for (const FlatParams::Group& g : flat_.Groups()) {
    params.push_back(g.params);
    grads.push_back(g.grads);
  }
  const AdamSettings& s = settings_;
  std::vector<at::Tensor>& exp_avgs = exp_avg_;
  std::vector<at::Tensor>& exp_avg_sqs = exp_avg_sq_;
  std::vector<at::Tensor>& steps = step_;
  if (s.weight_decay > 0 && s.decoupled) {
    at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps, lr, s.beta1, s.beta2,
                      s.weight_decay, s.eps, /*amsgrad=*/false, /*maximize=*/false);
  } else {
    at::_fused_adam_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps, lr, s.beta1, s.beta2,
                     s.decoupled ? 0.0 : s.weight_decay, s.eps, /*amsgrad=*/false, /*maximize=*/false);
  }
#else
  (void)lr;
#endif
}

// Eager: the kernel's step count is set from steps_ (a fill, no host sync), so checkpoints keep
// one count and resume either way.
void FlatAdam::FusedStep(double lr) {
  for (at::Tensor& step : step_) step.fill_(static_cast<double>(steps_));
  device_steps_set_ = true;
  RunFusedKernel(lr);
}

void FlatAdam::StepOnDevice(const at::Tensor& lr) {
  if (!fused_) throw Error("FlatAdam::StepOnDevice needs LibTorch's fused Adam kernel (LibTorch >= 2.4)");
  c10::NoGradGuard no_grad;
  // The count is set from the host once, outside any capture (the first step runs eagerly), and
  // from then on advanced by the step itself.
  if (!device_steps_set_) {
    for (at::Tensor& step : step_) step.fill_(static_cast<double>(steps_));
    device_steps_set_ = true;
  }
  for (at::Tensor& step : step_) step.add_(1);
  RunFusedKernel(lr);
}

// Each group's elements split over LibTorch's intra-op threads (the rank's cores; this file is
// compiled with OpenMP, see util/parallel_for.h). The OpenMP runtime is LibTorch's own
// (libgomp.so.1, loaded once by its soname, the pip wheel's copy included).
// Sharded: this rank's part of each group only, then the parameters all-gathered, or, in
// node-shared memory, the node's ranks meet.
void FlatAdam::OnePassStep(double lr) {
  const AdamSettings& s = settings_;
  const AdamScalars scalars = MakeAdamScalars(lr, s.beta1, s.beta2, s.eps, s.weight_decay, s.decoupled, steps_);
  for (size_t i = 0; i < flat_.Groups().size(); ++i) {
    FlatParams::Group& g = flat_.Groups()[i];
    float* param = g.params.data_ptr<float>();
    const float* grad = g.grads.data_ptr<float>();
    float* exp_avg = exp_avg_[i].data_ptr<float>();
    float* exp_avg_sq = exp_avg_sq_[i].data_ptr<float>();
    const ShardRange part = sharded_ ? ShardOf(g.params.numel(), s.shard_over->Rank(), s.shard_over->Size())
                                     : ShardRange{0, g.params.numel()};
    at::parallel_for(part.begin, part.end, /*grain_size=*/1 << 15, [&](int64_t begin, int64_t end) {
      AdamUpdate(param + begin, grad + begin, exp_avg + begin, exp_avg_sq + begin, end - begin, scalars);
    });
    if (sharded_ && !Shared()) s.shard_over->AllGatherShards(g.params);
  }
  // Shared: the other ranks' parts are written before any rank's next forward reads them.
  if (Shared()) s.shard_over->Barrier();
}

void FlatAdam::GatherState() {
  if (!sharded_) return;
  if (Shared()) {
    settings_.shard_over->Barrier();  // every part is in place: nothing to gather
    return;
  }
  for (size_t i = 0; i < exp_avg_.size(); ++i) {
    settings_.shard_over->AllGatherShards(exp_avg_[i]);
    settings_.shard_over->AllGatherShards(exp_avg_sq_[i]);
  }
}

at::Tensor FlatAdam::State(size_t param, size_t name) const {
  const std::vector<at::Tensor>& buffers = name == 0 ? exp_avg_ : exp_avg_sq_;
  return flat_.View(buffers[flat_.GroupOf(param)], param);
}

void FlatAdam::ZeroGrad() {
  for (FlatParams::Group& group : flat_.Groups()) group.grads.zero_();
}

// torch.optim.Adam's single-tensor update (AdamW's decay, or Adam's L2 term), elementwise over each flat group;
// or LibTorch's fused kernel (torch.optim.Adam(fused=True)) where it has one for the device.
void FlatAdam::Step(double lr) {
  c10::NoGradGuard no_grad;
  ++steps_;
  if (fused_) {
    FusedStep(lr);
    return;
  }
  if (one_pass_) {
    OnePassStep(lr);
    return;
  }
  const double b1 = settings_.beta1, b2 = settings_.beta2;
  const double bias_correction1 = 1 - std::pow(b1, static_cast<double>(steps_));
  const double bias_correction2_sqrt = std::sqrt(1 - std::pow(b2, static_cast<double>(steps_)));
  const double decay = settings_.weight_decay;
  for (size_t i = 0; i < flat_.Groups().size(); ++i) {
    FlatParams::Group& g = flat_.Groups()[i];
    at::Tensor& exp_avg = exp_avg_[i];
    at::Tensor& exp_avg_sq = exp_avg_sq_[i];
    if (decay > 0 && settings_.decoupled) g.params.mul_(1 - lr * decay);
    const at::Tensor grad = decay > 0 && !settings_.decoupled ? g.grads.add(g.params, decay) : g.grads;
    exp_avg.mul_(b1).add_(grad, 1 - b1);
    exp_avg_sq.mul_(b2).addcmul_(grad, grad, 1 - b2);
    const at::Tensor denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(settings_.eps);
    g.params.addcdiv_(exp_avg, denom, -lr / bias_correction1);
  }
}

}  // namespace ct
