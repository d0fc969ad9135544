#include "comm/gradient_sync.h"

#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <algorithm>

#include "util/error.h"
#include "util/trace.h"

namespace ct {
namespace {

// Runs a callback after an AccumulateGrad node has added a new gradient into .grad (the hook
// DDP uses; LibTorch 1.13 has no public post-accumulate hook on tensors).
class AfterAccumulation : public torch::autograd::FunctionPostHook {
 public:
  explicit AfterAccumulation(std::function<void()> callback) : callback_(std::move(callback)) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                            const torch::autograd::variable_list& /*inputs*/) override {
    callback_();
    return outputs;
  }

 private:
  std::function<void()> callback_;
};

// A tensor that shares `flat`'s storage at `offset` with `like`'s shape. Not an autograd view,
// so an optimizer's zero_grad may detach_() it in place.
at::Tensor AliasInto(const at::Tensor& flat, int64_t offset, const at::Tensor& like) {
  std::vector<int64_t> strides(like.dim(), 1);  // contiguous
  for (int64_t d = like.dim() - 1; d > 0; --d) strides[d - 1] = strides[d] * like.size(d);
  return at::empty({0}, flat.options()).set_(flat.storage(), flat.storage_offset() + offset, like.sizes(), strides);
}

}  // namespace

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
  std::vector<int64_t> offset_of(parameters_.size());
  std::vector<int64_t> elements;  // per bucket
  int64_t bytes = 0;
  for (size_t i = parameters_.size(); i-- > 0;) {
    const int64_t param_bytes = parameters_[i].numel() * static_cast<int64_t>(parameters_[i].element_size());
    if (buckets_.empty() || (bytes > 0 && bytes + param_bytes > capacity)) {
      buckets_.emplace_back();
      elements.push_back(0);
      bytes = 0;
    }
    bucket_of_[i] = buckets_.size() - 1;
    offset_of[i] = elements.back();
    buckets_.back().params.push_back(i);
    elements.back() += parameters_[i].numel();
    bytes += param_bytes;
    num_elements_ += parameters_[i].numel();
  }
  for (size_t b = 0; b < buckets_.size(); ++b) buckets_[b].flat = at::zeros({elements[b]}, kind);
  for (size_t i = 0; i < parameters_.size(); ++i) {
    grad_slot_.push_back(AliasInto(buckets_[bucket_of_[i]].flat, offset_of[i], parameters_[i]));
  }
  ready_.assign(parameters_.size(), false);
  if (options_.overlap) {
    for (size_t i = 0; i < parameters_.size(); ++i) {
      // std::shared_ptr in LibTorch 1.13, c10::intrusive_ptr in 2.x.
      const auto accumulator = torch::autograd::impl::grad_accumulator(parameters_[i]);
      if (!accumulator) throw Error("GradientSync: a parameter does not require grad or is not a leaf");
      const uintptr_t key =
          accumulator->add_post_hook(std::make_unique<AfterAccumulation>([this, i] { OnGradientReady(i); }));
      // Holding the accumulator keeps the hook alive; releasing the handle removes the hook.
      hooks_.emplace_back(nullptr, [accumulator, key](void*) { accumulator->del_post_hook(key); });
    }
  }
}

GradientSync::~GradientSync() { hooks_.clear(); }

void GradientSync::BroadcastParameters() {
  c10::NoGradGuard no_grad;
  for (Bucket& bucket : buckets_) {
    // Staged in a buffer of their own: the bucket holds gradients.
    std::vector<at::Tensor> values;
    for (size_t i : bucket.params) values.push_back(parameters_[i].reshape({-1}));
    at::Tensor staged = at::cat(values);
    comm_.Broadcast(staged, /*root=*/0);
    int64_t offset = 0;
    for (size_t i : bucket.params) {
      at::Tensor& p = parameters_[i];
      p.copy_(staged.narrow(0, offset, p.numel()).view(p.sizes()));
      offset += p.numel();
    }
  }
}

void GradientSync::PointGradAtBucket(size_t param) {
  at::Tensor& p = parameters_[param];
  const at::Tensor& slot = grad_slot_[param];
  const at::Tensor& grad = p.grad();
  if (grad.defined() && grad.data_ptr() == slot.data_ptr()) return;
  if (grad.defined()) {
    slot.copy_(grad);
  } else {
    slot.zero_();
  }
  p.mutable_grad() = slot;
}

void GradientSync::StartFilling() {
  next_launch_ = 0;
  ready_.assign(parameters_.size(), false);
  for (Bucket& bucket : buckets_) bucket.unfilled = bucket.params.size();
}

void GradientSync::PrepareBackward(bool communicate) {
  std::lock_guard<std::mutex> lock(hook_mutex_);
  c10::NoGradGuard no_grad;
  for (size_t i = 0; i < parameters_.size(); ++i) PointGradAtBucket(i);
  armed_ = communicate && options_.overlap;
  if (armed_) StartFilling();
}

void GradientSync::OnGradientReady(size_t param) {
  std::lock_guard<std::mutex> lock(hook_mutex_);
  if (!armed_ || ready_[param]) return;
  c10::NoGradGuard no_grad;
  PointGradAtBucket(param);  // normally already there: accumulation went into the bucket
  MarkReady(param);
  LaunchReadyBuckets();
}

void GradientSync::MarkReady(size_t param) {
  ready_[param] = true;
  --buckets_[bucket_of_[param]].unfilled;
}

// The complete buckets not yet launched go out together, in index order: on NCCL as one group.
void GradientSync::LaunchReadyBuckets() {
  const size_t first = next_launch_;
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].unfilled == 0) ++next_launch_;
  if (first == next_launch_) return;
  std::vector<at::Tensor> wires;
  for (size_t b = first; b < next_launch_; ++b) {
    Bucket& bucket = buckets_[b];
    if (trace::On()) bucket.launched = std::chrono::steady_clock::now();
    if (options_.bf16) {
      if (!bucket.wire.defined()) bucket.wire = at::empty_like(bucket.flat, bucket.flat.options().dtype(at::kBFloat16));
      bucket.wire.copy_(bucket.flat);
      wires.push_back(bucket.wire);
    } else {
      wires.push_back(bucket.flat);
    }
  }
  std::vector<std::unique_ptr<Work>> works = comm_.AllReduceAverageAsyncEach(wires);
  for (size_t b = first; b < next_launch_; ++b) buckets_[b].work = std::move(works[b - first]);
}

void GradientSync::AverageGradients() {
  std::lock_guard<std::mutex> lock(hook_mutex_);
  c10::NoGradGuard no_grad;
  if (!armed_) StartFilling();  // no hook ran: every bucket goes out below
  // Parameters no hook reported (unused by this backward, or overlap off): their .grad as it
  // stands, or zero; then the remaining buckets go out in order.
  for (size_t i = 0; i < parameters_.size(); ++i) {
    if (ready_[i]) continue;
    PointGradAtBucket(i);
    MarkReady(i);
  }
  LaunchReadyBuckets();
  const bool tracing = trace::On();
  for (Bucket& bucket : buckets_) {
    bucket.work->Wait();
    if (tracing) bucket.done = bucket.work->DoneAt();
    bucket.work.reset();
    if (options_.bf16) bucket.flat.copy_(bucket.wire);
  }
  if (tracing) TraceBuckets();
  armed_ = false;
}

// Where the host knows when an all-reduce ended (MPI); on NCCL it ends on a stream.
void GradientSync::TraceBuckets() const {
  std::vector<std::pair<std::chrono::steady_clock::time_point, int64_t>> changes;  // bytes in flight +/-
  for (size_t b = 0; b < buckets_.size(); ++b) {
    const Bucket& bucket = buckets_[b];
    if (!bucket.done) return;
    const at::Tensor& sent = options_.bf16 ? bucket.wire : bucket.flat;
    const int64_t bytes = sent.numel() * static_cast<int64_t>(sent.element_size());
    trace::RecordInterval("bucket in flight", "comm", static_cast<int64_t>(b), bucket.launched, *bucket.done,
                          {{{"bucket", static_cast<int64_t>(b)}, {"bytes", bytes}}});
    changes.emplace_back(bucket.launched, bytes);
    changes.emplace_back(*bucket.done, -bytes);
  }
  std::stable_sort(changes.begin(), changes.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  int64_t in_flight = 0;
  for (const auto& [at, change] : changes) trace::RecordCounter("bytes in flight", at, in_flight += change);
}

std::vector<GradientBucket> GradientSync::Buckets() const {
  std::vector<GradientBucket> out;
  for (const Bucket& bucket : buckets_) out.push_back({bucket.params, bucket.flat});
  return out;
}

at::Tensor GradientSync::ClipGradNorm(double max_norm) {
  c10::NoGradGuard no_grad;
  std::vector<at::Tensor> norms;
  norms.reserve(buckets_.size());
  for (const Bucket& bucket : buckets_) norms.push_back(at::norm(bucket.flat));
  const at::Tensor total = at::norm(at::stack(norms));
  // Python's `max_norm / t` is reciprocal(t) * max_norm: the same rounding as PyTorch's.
  const at::Tensor coefficient = at::clamp_max(at::reciprocal(total + 1e-6) * max_norm, 1.0);
  for (Bucket& bucket : buckets_) bucket.flat.mul_(coefficient);
  return total;
}

}  // namespace ct
