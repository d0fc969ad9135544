#include "comm/gradient_sync.h"

#include <c10/core/GradMode.h>

#include "util/error.h"

namespace ct {

GradientSync::GradientSync(std::vector<at::Tensor> parameters, Communicator& comm, SyncOptions options)
    : parameters_(std::move(parameters)), comm_(comm), options_(options) {
  if (parameters_.empty()) throw Error("GradientSync: the model has no parameters");
  const at::TensorOptions kind = parameters_.front().options();
  for (const auto& p : parameters_) {
    if (p.scalar_type() != kind.dtype() || p.device() != kind.device()) {
      throw Error("GradientSync: all parameters must share one dtype and device");
    }
  }
  // Buckets in reverse registration order: the last layers' gradients come first in backward.
  const auto capacity = static_cast<int64_t>(options_.bucket_mb * 1024 * 1024);
  bucket_of_.resize(parameters_.size());
  offset_of_.resize(parameters_.size());
  int64_t bytes = 0;
  std::vector<int64_t> sizes;  // elements per bucket
  for (size_t i = parameters_.size(); i-- > 0;) {
    const int64_t param_bytes = parameters_[i].numel() * static_cast<int64_t>(parameters_[i].element_size());
    if (buckets_.empty() || (bytes > 0 && bytes + param_bytes > capacity)) {
      buckets_.emplace_back();
      sizes.push_back(0);
      bytes = 0;
    }
    Bucket& bucket = buckets_.back();
    bucket_of_[i] = buckets_.size() - 1;
    offset_of_[i] = sizes.back();
    bucket.params.push_back(i);
    bucket.offsets.push_back(sizes.back());
    sizes.back() += parameters_[i].numel();
    bytes += param_bytes;
    num_elements_ += parameters_[i].numel();
  }
  for (size_t b = 0; b < buckets_.size(); ++b) buckets_[b].flat = at::zeros({sizes[b]}, kind);
  filled_.assign(parameters_.size(), false);
  if (options_.overlap) {
    for (size_t i = 0; i < parameters_.size(); ++i) {
      hooks_.push_back(parameters_[i].register_hook([this, i](const at::Tensor& grad) { OnGradient(i, grad); }));
    }
  }
}

GradientSync::~GradientSync() {
  for (size_t i = 0; i < hooks_.size(); ++i) parameters_[i].remove_hook(hooks_[i]);
}

at::Tensor GradientSync::Slot(size_t param) {
  const at::Tensor& p = parameters_[param];
  return buckets_[bucket_of_[param]].flat.narrow(0, offset_of_[param], p.numel()).view(p.sizes());
}

void GradientSync::BroadcastParameters() {
  c10::NoGradGuard no_grad;
  for (size_t i = 0; i < parameters_.size(); ++i) Slot(i).copy_(parameters_[i]);
  for (Bucket& bucket : buckets_) comm_.Broadcast(bucket.flat, /*root=*/0);
  for (size_t i = 0; i < parameters_.size(); ++i) parameters_[i].copy_(Slot(i));
}

void GradientSync::StartFilling() {
  next_launch_ = 0;
  filled_.assign(parameters_.size(), false);
  for (Bucket& bucket : buckets_) bucket.unfilled = bucket.params.size();
}

void GradientSync::PrepareBackward(bool communicate) {
  armed_ = communicate && options_.overlap;
  if (armed_) StartFilling();
}

void GradientSync::OnGradient(size_t param, const at::Tensor& grad) {
  if (!armed_ || filled_[param]) return;
  c10::NoGradGuard no_grad;
  // This backward's gradient plus what earlier micro-batches accumulated in .grad.
  at::Tensor slot = Slot(param);
  slot.copy_(grad);
  const at::Tensor& accumulated = parameters_[param].grad();
  if (accumulated.defined()) slot.add_(accumulated);
  filled_[param] = true;
  --buckets_[bucket_of_[param]].unfilled;
  LaunchReadyBuckets();
}

void GradientSync::LaunchReadyBuckets() {
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].unfilled == 0) Launch(buckets_[next_launch_++]);
}

void GradientSync::Launch(Bucket& bucket) { bucket.work = comm_.AllReduceAverageAsync(bucket.flat); }

void GradientSync::AverageGradients() {
  c10::NoGradGuard no_grad;
  if (!armed_) StartFilling();  // no hook ran: every gradient is packed below
  // Gradients no hook delivered (parameters unused by this backward, or overlap off) come
  // from .grad as it stands; then the remaining buckets go out in order.
  for (size_t i = 0; i < parameters_.size(); ++i) {
    if (filled_[i]) continue;
    const at::Tensor& grad = parameters_[i].grad();
    if (grad.defined()) {
      Slot(i).copy_(grad);
    } else {
      Slot(i).zero_();
    }
    filled_[i] = true;
    --buckets_[bucket_of_[i]].unfilled;
  }
  LaunchReadyBuckets();
  for (Bucket& bucket : buckets_) {
    bucket.work->Wait();
    bucket.work.reset();
  }
  for (size_t i = 0; i < parameters_.size(); ++i) {
    at::Tensor& p = parameters_[i];
    if (p.grad().defined()) {
      p.mutable_grad().copy_(Slot(i));
    } else {
      p.mutable_grad() = Slot(i).clone();
    }
  }
  armed_ = false;
}

}  // namespace ct
