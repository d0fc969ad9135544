// Data-parallel synchronisation of a model's parameters and gradients, as DDP does it.
//
// Gradients live in flat buckets of about runtime.bucket_mb, filled in reverse registration
// order (roughly the order backward produces them): every parameter's .grad shares its bucket's
// storage (DDP's gradient_as_bucket_view), so backward accumulates straight into the buckets
// and nothing is copied in or out. Each bucket is averaged with one all-reduce, in place.
//
// With overlap, a hook that runs after each parameter's gradient has been accumulated counts the
// bucket's parameters, and a complete bucket is handed to the communicator at once: on the MPI
// backend a communication thread reduces it, on NCCL a side stream, while backward goes on.
// Buckets are launched strictly in index order, so every rank issues the same collectives in
// the same order whatever order (and on whatever threads) its hooks fire.
//
// runtime.allreduce_precision=bf16: a launched bucket is copied to a bfloat16 buffer of its own,
// which is averaged over ranks instead, and copied back after the wait.
//
// Gradient accumulation: PrepareBackward(false) for all but the last micro-batch of a step
// leaves the hooks idle (gradients accumulate in the buckets locally, no communication);
// PrepareBackward(true) before the last makes complete buckets go out during its backward.
#pragma once

#include <ATen/ATen.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "comm/communicator.h"

namespace ct {

struct SyncOptions {
  double bucket_mb = 25.0;  // bucket capacity in MiB; a larger parameter gets a bucket of its own
  bool overlap = true;      // reduce buckets during backward (false: all after backward)
  bool bf16 = false;        // send each bucket as bfloat16 (half the bytes), averaged in bfloat16
};

// A flat gradient buffer and its parameters (indices into the GradientSync's list), in the order
// of their places in it: each parameter's .grad aliases its place.
struct GradientBucket {
  std::vector<size_t> params;
  at::Tensor grads;
};

class GradientSync {
 public:
  GradientSync(std::vector<at::Tensor> parameters, Communicator& comm, SyncOptions options = {});
  ~GradientSync();  // removes the hooks, which point at this object
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  // Every rank's parameters <- rank 0's, so that all ranks start from the same weights.
  void BroadcastParameters();

  // Before each backward: `communicate` is true for the last micro-batch of a step. Points every
  // .grad back at its bucket if something replaced it (an optimizer's zero_grad(set_to_none)).
  void PrepareBackward(bool communicate);

  // After the step's last backward: every parameter's .grad <- its mean over ranks (a parameter
  // without a gradient counts as zero). Launches the buckets the hooks have not, then waits.
  void AverageGradients();

  // After AverageGradients: scales the gradients so that their global L2 norm is at most
  // `max_norm`, as torch.nn.utils.clip_grad_norm_ does (coefficient max_norm / (norm + 1e-6),
  // clamped at 1), over the flat buckets: a few passes, no host sync. Returns the norm before
  // clipping, a 0-d tensor on the gradients' device (the same on every rank).
  at::Tensor ClipGradNorm(double max_norm);

  // The buckets, for an optimizer that works on flat buffers of the same layout (FlatAdam).
  std::vector<GradientBucket> Buckets() const;

  int64_t NumElements() const { return num_elements_; }
  int NumBuckets() const { return static_cast<int>(buckets_.size()); }

 private:
  struct Bucket {
    at::Tensor flat;             // [sum of its parameters' numel]
    at::Tensor wire;             // bf16: flat's bfloat16 copy, all-reduced in its place
    std::vector<size_t> params;  // indices into parameters_
    size_t unfilled = 0;         // parameters whose gradient is not final yet this step
    std::unique_ptr<Work> work;  // the all-reduce in flight
    // For the trace (util/trace.h), while it records: when the all-reduce was launched and done.
    std::chrono::steady_clock::time_point launched;
    std::optional<std::chrono::steady_clock::time_point> done;
  };
  void StartFilling();  // no bucket complete, none launched
  void PointGradAtBucket(size_t param);
  void OnGradientReady(size_t param);  // the hook, after accumulation into .grad
  void MarkReady(size_t param);
  void LaunchReadyBuckets();
  void TraceBuckets() const;  // each bucket's launch -> done, and the bytes in flight

  std::vector<at::Tensor> parameters_;
  Communicator& comm_;
  SyncOptions options_;
  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_;             // parameter -> bucket
  std::vector<at::Tensor> grad_slot_;         // parameter -> its gradient's place in its bucket
  std::vector<bool> ready_;                   // parameter's gradient is final for this step
  std::vector<std::shared_ptr<void>> hooks_;  // removes a hook when released
  size_t next_launch_ = 0;                    // buckets before this one are launched
  bool armed_ = false;                        // hooks launch buckets during this backward
  // The autograd engine may call hooks from more than one thread (a thread per device, and
  // reentrant backward): the bucket counts and launches above change under this lock, as in
  // DDP's reducer, so a bucket is launched once and buckets in order.
  std::mutex hook_mutex_;
  int64_t num_elements_ = 0;
};

}  // namespace ct
