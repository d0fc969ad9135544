// Checkpoints, at epoch boundaries and (after a preemption signal) inside an epoch: everything
// a resumed run needs to continue exactly as if it had never stopped (on CPU with the same
// world size, bit for bit):
//   model and optimizer state; epoch, step in the epoch and optimizer step, with every rank's
//   per-step losses of a partial epoch; the state of each component that has one (the lr
//   schedule with its plateau scheduler, early stopping, the metrics writer), each snapshot
//   by the component itself; world size (a resume on another world size re-derives the lr
//   for the new global batch and says so); the resolved config and a fingerprint of the model.
// Data order and sampling noise are functions of (seed, epoch, step, rank), so no RNG state
// or data position needs saving beyond the epoch and step.
//
// Written by rank 0 via a temporary file, fsync and rename, so a file under its name is always
// complete; the newest output.keep are kept.
#pragma once

#include <string>
#include <vector>

#include "model/model.h"
#include "run/metrics_writer.h"
#include "train/lr_schedule.h"
#include "train/optimizer.h"
#include "train/plateau.h"

namespace ct {

struct TrainingState {
  // Where training stands.
  int64_t epoch = 0;          // epochs completed
  int64_t step_in_epoch = 0;  // > 0: preempted after this many steps of epoch `epoch` + 1
  at::Tensor partial_losses;  // [world size, steps, 3]: every rank's per-step losses of that partial epoch
  int64_t global_step = 0;
  int64_t world_size = 0;
  // The components' own snapshots.
  LrSchedule::State lr;
  EarlyStopping::State early_stop;
  BestEpoch::State best;
  MetricsWriter::State metrics;
  // What it belongs to.
  std::string model_fingerprint;
  std::string config_yaml;
};

// A checkpoint stopped inside an epoch: the per-step (loss, metrics...) [steps, columns] this
// rank resumes that epoch with, its own row of s.partial_losses, or the ranks' mean on another
// world size. ConfigError when this run's epoch has other steps or other metrics.
at::Tensor ResumedStepLosses(const TrainingState& s, const std::string& path, int rank, int world_size, int64_t steps,
                             int64_t columns);

// checkpoints/epoch-NNNNNN.pt at an epoch boundary; epoch-NNNNNN.step-SSSSSS.pt when
// preempted inside the next epoch (sorts after the first and before epoch NNNNNN+1).
std::string CheckpointPath(const std::string& run_dir, int64_t epoch, int64_t step_in_epoch = 0);

// The model part holds the model's State() under its Python names, nested as
// torch::nn::Module::save nests them: in Python, torch.load(path).model.state_dict() (a
// TorchScript archive; torch.jit.load reads it too) gives {"encoder.0.weight": ..., ...}.
void SaveCheckpoint(const std::string& path, Model& model, const Optimizer& optimizer, const TrainingState& state);

// Restores model and optimizer in place (tensors onto `device`) and returns the rest. A checkpoint
// of another model (its fingerprint differs) is a ConfigError that ends with `mismatch_fix`.
TrainingState LoadCheckpoint(const std::string& path, Model& model, Optimizer& optimizer, const c10::Device& device,
                             const std::string& mismatch_fix);

// The model alone (for predict), and the state without config checks.
TrainingState LoadCheckpointModel(const std::string& path, Model& model, const c10::Device& device,
                                  const std::string& mismatch_fix);

// Where a checkpoint stands and the resolved config it was written with (its YAML text).
struct CheckpointSummary {
  int64_t epoch = 0;
  int64_t step_in_epoch = 0;
  int64_t global_step = 0;
  std::string config_yaml;
};

// Checks the whole file (every record's CRC-32, util/zip_check.h) and reads its summary, so it
// also tells whether the checkpoint can be trusted: DataError (exit 3) if not. The loads above do
// not check again: a checkpoint is chosen through this first (train: rank 0's ChooseCheckpoint;
// predict: every rank), and every rank re-reading the whole file for its CRCs would double the
// start-up I/O of a large model on a shared file system.
CheckpointSummary ReadCheckpointSummary(const std::string& path);

// The checkpoints in run_dir/checkpoints, oldest first (a .pt.tmp, an interrupted write, is
// never one).
std::vector<std::string> CheckpointsIn(const std::string& run_dir);

// checkpoints/best.pt: the full checkpoint of the best epoch so far (never pruned, never picked
// by --resume auto; --resume with its path resumes from it).
std::string BestCheckpointPath(const std::string& run_dir);

// Deletes all but the newest `keep` checkpoints.
void PruneCheckpoints(const std::string& run_dir, int64_t keep);

}  // namespace ct
