// `clustertrain train`: the data-parallel training run, from a loaded config to model.pt.
//
// A Trainer is built in phases (run directory, placement, data, model and gradient sync,
// optimizer and schedules, resume) and then Fit() runs the epoch loop. Every rank issues the
// same collectives in the same order; Fit() lists them.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "cluster/gpu_epoch_stats.h"
#include "cluster/mpi_world.h"
#include "comm/communicator.h"
#include "comm/gradient_sync.h"
#include "data/dataset_schema.h"
#include "data/shard_loader.h"
#include "data/train_batches.h"
#include "model/model.h"
#include "run/metrics.h"
#include "run/metrics_writer.h"
#include "run/run_directory.h"
#include "run/tensorboard_log.h"
#include "run/trace_window.h"
#include "train/checkpoint.h"
#include "train/hang_watchdog.h"
#include "train/lr_schedule.h"
#include "train/optimizer.h"
#include "train/plateau.h"
#include "train/step_runner.h"
#include "train/test_hooks.h"
#include "train/training_data.h"
#include "train/validate.h"
#include "util/config.h"

namespace ct {

// How a run treats its run directory and an earlier run (train's command line).
struct TrainOptions {
  std::string resume;      // "" (start fresh), "auto" (the newest readable checkpoint in output.dir) or a path
  bool overwrite = false;  // move an earlier run in output.dir aside
  bool allow_config_changes = false;  // resume although settings that break exactness changed
};

class Trainer {
 public:
  // Collective. Throws ct::Error on any failure.
  Trainer(const Config& config, const MpiWorld& world, const TrainOptions& options);
  // Collective: trains the remaining epochs and writes model.pt. Throws ct::Error; Preempted
  // after a signal, once the checkpoint is written.
  void Fit();

 private:
  using Clock = std::chrono::steady_clock;
  // Construction phases, in this order.
  std::string PrepareRunDirectory(const TrainOptions& options);
  void ResumeChosenBatchSize(const std::string& checkpoint_yaml);
  void LoadData();
  void BuildModelAndSync();
  void ChooseBatchSize();  // train.batch_size: auto, on a fresh start
  void BuildOptimizerAndSchedules();
  void Resume(const std::string& checkpoint);

  // The loop.
  EpochTotals TrainEpoch(int64_t epoch);
  bool StopRequestedEverywhere();
  [[noreturn]] void CheckpointAndStopForPreemption(int64_t epoch, int64_t step, const at::Tensor& step_losses);
  EpochRecord EndEpoch(int64_t epoch, const EpochTotals& totals);
  void BroadcastBuffers();
  struct EpochSeconds {
    double train = 0, val = 0, epoch = 0;
    std::optional<double> device_comm;  // CUDA: the device's timing of the waits for all-reduces
  };
  EpochRecord RecordOf(int64_t epoch, const EpochTotals& totals, const at::Tensor& train_means, const ValResult& v,
                       const EpochSeconds& seconds) const;
  void PublishRecord(const EpochRecord& record, const EpochTotals& totals);
  at::Tensor ReduceTrainLosses(int64_t epoch, const EpochTotals& totals);
  void RecordGpuStats(EpochRecord& record);
  bool UpdateSchedules(const EpochRecord& record);
  void SaveCheckpoint(int64_t epochs_done, int64_t step_in_epoch = 0, const at::Tensor& partial_losses = {});
  void SaveBest(int64_t epochs_done);
  std::string TraceMetadata() const;
  TrainingState StateNow(int64_t epochs_done, int64_t step_in_epoch = 0, const at::Tensor& partial_losses = {}) const;
  void Finish();
  int64_t Columns() const { return 1 + static_cast<int64_t>(metric_names_.size()); }  // loss and metrics

  Config config_;                              // train.batch_size: auto becomes the size chosen (or resumed)
  std::unique_ptr<HangWatchdog> watchdog_;     // first: it watches everything after it
  std::optional<RunDirectory> run_directory_;  // rank 0: the lock on output.dir
  const MpiWorld& world_;
  const bool lead_;  // rank 0: logs progress and writes the run's files
  const Clock::time_point run_start_ = Clock::now();
  c10::Device device_{c10::kCPU};
  std::unique_ptr<StepStream> step_stream_;  // CUDA: current from the model's construction on
  std::unique_ptr<TrainBatches> train_;
  std::optional<ShardLoader> val_;
  int64_t steps_ = 0;  // optimizer steps per epoch
  std::unique_ptr<Model> model_;
  std::vector<std::string> metric_names_;  // the model's, in the order it returns them
  Monitor monitor_;                        // train.monitor: what the plateau, early stop and best.pt follow
  std::unique_ptr<Communicator> comm_;
  std::unique_ptr<GradientSync> sync_;
  std::unique_ptr<Communicator> node_comm_;  // the node's ranks, where they split the optimizer's update
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<StepRunner> step_runner_;  // one optimizer step, eager or captured
  std::optional<LrSchedule> lr_;
  std::optional<EarlyStopping> early_stop_;
  std::optional<BestEpoch> best_;
  MetricsWriter metrics_;
  std::unique_ptr<TensorBoardLog> tensorboard_;  // rank 0, output.tensorboard
  // Where training stands: the next epoch and step to run, and that epoch's per-step losses
  // so far when a checkpoint stopped inside it.
  int64_t start_epoch_ = 0;
  int64_t start_step_ = 0;
  at::Tensor resumed_losses_;
  int64_t global_step_ = 0;
  std::unique_ptr<TrainerTestHooks> test_hooks_;  // CT_TEST_HOLD_AT_STEP, CT_TEST_COUNT_SYNCS
  std::unique_ptr<GpuEpochMonitor> gpu_monitor_;  // on CUDA
  std::unique_ptr<TraceWindow> trace_;            // output.trace.steps
};

// Trainer(config, world, options).Fit().
void RunTraining(const Config& config, const MpiWorld& world, const TrainOptions& options = {});

}  // namespace ct
