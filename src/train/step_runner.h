// One optimizer step of the training loop, eager or replayed from a CUDA graph, with the
// opt-in non-finite check; the epoch's per-step losses and timings accumulate in EpochTotals.
// Collective: every rank runs the same steps (the gradient all-reduces, the check's all-reduce).
#pragma once

#include <ATen/ATen.h>

#include <chrono>
#include <memory>
#include <string>

#include "cluster/mpi_world.h"
#include "comm/communicator.h"
#include "comm/gradient_sync.h"
#include "data/train_batches.h"
#include "model/model.h"
#include "model/stale_gradients.h"
#include "train/cuda_graph_step.h"
#include "train/lr_schedule.h"
#include "train/optimizer.h"
#include "util/config.h"

namespace ct {

// One epoch's training, accumulated on this rank.
struct EpochTotals {
  std::chrono::steady_clock::time_point start;
  at::Tensor step_losses;  // [steps, 1 + metrics]: (loss, metrics...) per step, on the device
  double data_seconds = 0, compute_seconds = 0, comm_seconds = 0;
  int64_t skipped_steps = 0;
};

// What a step works with; the Trainer owns all of it.
struct StepParts {
  Model& model;
  GradientSync& sync;
  Communicator& comm;
  Optimizer& optimizer;
  TrainBatches& batches;
  LrSchedule& lr;
};

class StepRunner {
 public:
  // Decides runtime.cuda_graph (the reason logged by rank 0) and builds the graph where used.
  StepRunner(const Config& config, const MpiWorld& world, c10::Device device, const StepParts& parts);

  // The optimizer step `step` (0-based) of `epoch`, the run's `global_step`: its loss and metrics
  // are added to totals.step_losses[step], its seconds to the totals.
  void Run(int64_t epoch, int64_t step, int64_t global_step, EpochTotals& totals);

 private:
  void Eager(int64_t epoch, int64_t step, int64_t global_step, EpochTotals& totals);
  void Captured(int64_t epoch, int64_t step, int64_t global_step, EpochTotals& totals);
  at::Tensor BodyForGraph(const Batch& batch);
  void ForgetGradients();  // before a step's first backward
  bool NonFiniteEverywhere(int64_t step, int64_t global_step, const EpochTotals& totals);
  void HandleNonFinite(int64_t epoch, int64_t step, EpochTotals& totals);

  const TrainConfig& train_;
  const MpiWorld& world_;
  StepParts parts_;
  std::unique_ptr<GraphStep> graph_step_;  // runtime.cuda_graph, where the step is captured
  at::Tensor lr_on_device_;                // its learning rate, [] float32, set before each replay
  std::unique_ptr<StaleGradients> stale_;  // eager CPU steps: gradients replaced, not zeroed first
};

// The advice after a non-finite loss (the error's second half).
std::string LowerLrAdvice(double lr);

}  // namespace ct
