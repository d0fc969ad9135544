// Data-parallel synchronisation of a model's parameters and gradients, as DDP does it.
//
// Gradients are packed into flat buckets of about runtime.bucket_mb, filled in reverse
// registration order (roughly the order backward produces them), and averaged with one
// all-reduce per bucket. With overlap, a hook on every parameter copies its gradient into its
// bucket as soon as backward has computed it, and a full bucket is handed to the communicator at
// once: on the MPI backend a communication thread reduces it, on NCCL a side stream, while
// backward goes on. Buckets are launched strictly in index order, so every rank issues the same
// collectives in the same order whatever order its hooks fire in.
//
// Gradient accumulation: PrepareBackward(false) for all but the last micro-batch of a step
// leaves the hooks idle (gradients accumulate in .grad locally, no communication); for the last,
// PrepareBackward(true) makes each hook reduce .grad + the new gradient.
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <vector>

#include "comm/communicator.h"

namespace ct {

struct SyncOptions {
  double bucket_mb = 25.0;  // bucket capacity in MiB; a larger parameter gets a bucket of its own
  bool overlap = true;      // reduce buckets during backward (false: all after backward)
};

class GradientSync {
 public:
  GradientSync(std::vector<at::Tensor> parameters, Communicator& comm, SyncOptions options = {});
  ~GradientSync();  // removes the hooks, which point at this object
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  // Every rank's parameters <- rank 0's, so that all ranks start from the same weights.
  void BroadcastParameters();

  // Before each backward: `communicate` is true for the last micro-batch of a step.
  void PrepareBackward(bool communicate);

  // After the step's last backward: every parameter's .grad <- its mean over ranks (a parameter
  // without a gradient counts as zero). Launches the buckets the hooks have not, then waits.
  void AverageGradients();

  int64_t NumElements() const { return num_elements_; }
  int NumBuckets() const { return static_cast<int>(buckets_.size()); }

 private:
  struct Bucket {
    at::Tensor flat;                  // [sum of its parameters' numel]
    std::vector<size_t> params;       // indices into parameters_
    std::vector<int64_t> offsets;     // where each starts in flat
    size_t unfilled = 0;              // parameters whose gradient is not yet in flat
    std::unique_ptr<Work> work;       // the all-reduce in flight
  };
  void StartFilling();  // every bucket empty, none launched
  void OnGradient(size_t param, const at::Tensor& grad);  // the hook
  void LaunchReadyBuckets();
  void Launch(Bucket& bucket);
  at::Tensor Slot(size_t param);  // the parameter's place in its bucket, shaped like it

  std::vector<at::Tensor> parameters_;
  Communicator& comm_;
  SyncOptions options_;
  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_;    // parameter -> bucket
  std::vector<int64_t> offset_of_;   // parameter -> offset in its bucket
  std::vector<bool> filled_;         // parameter's gradient is in its bucket this step
  std::vector<unsigned> hooks_;      // hook handles, per parameter
  size_t next_launch_ = 0;           // buckets before this one are launched
  bool armed_ = false;               // hooks copy and launch during this backward
  int64_t num_elements_ = 0;
};

}  // namespace ct
