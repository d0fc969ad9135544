// What a run shows in TensorBoard (rank 0, output.tensorboard): every epoch record as scalars at
// the epoch's last global step (train/loss, val/mse, lr, samples_per_s, time/compute, ...: the
// fields of metrics.jsonl, so the two agree exactly), and train/loss_step every
// output.log_every steps from the epoch's per-step losses, copied to the host once, at the
// epoch's end.
#pragma once

#include <ATen/Tensor.h>

#include <memory>
#include <string>

#include "run/event_file.h"
#include "run/metrics.h"

namespace ct {

// The record's fields as TensorBoard tags: train_loss -> train/loss, val_kl -> val/kl,
// data_seconds -> time/data, others by their own name; global_step is the step axis, not a
// scalar. A null field (NaN) stays NaN.
Scalars EpochScalars(const EpochRecord& record);

class TensorBoardLog {
 public:
  // A new event file in run_dir/tensorboard. `global_step`: where the run starts (0, or a
  // resumed checkpoint's step); events after it from earlier files are dropped by TensorBoard.
  TensorBoardLog(const std::string& run_dir, int64_t global_step);

  // step_losses: [steps, 1 + metrics] (loss, metrics...) per step of the epoch, averaged over ranks, on the
  // host; the epoch's first step is record.global_step - steps + 1.
  void WriteEpoch(const EpochRecord& record, const at::Tensor& step_losses, int64_t log_every);

  const std::string& Path() const { return file_.Path(); }

 private:
  EventFileWriter file_;
};

}  // namespace ct
