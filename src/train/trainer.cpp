#include "train/trainer.h"

#include <torch/utils.h>

#include <algorithm>
#include <cmath>

#include "cluster/agree.h"
#include "cluster/gather_strings.h"
#include "cluster/placement.h"
#include "cluster/preemption.h"
#include "cluster/rank_lines.h"
#include "comm/make_communicator.h"
#include "model/forward.h"
#include "model/make_model.h"
#include "run/progress.h"
#include "train/batch_autotune.h"
#include "train/config_changes.h"
#include "train/model_io.h"
#include "train/resume_choice.h"
#include "train/validate.h"
#include "util/atomic_file.h"
#include "util/data_paths.h"
#include "util/error.h"
#include "util/heartbeat.h"
#include "util/logging.h"
#include "util/process_memory.h"
#include "util/seconds.h"
#include "util/test_stop.h"
#include "util/trace.h"

namespace ct {
namespace {

using Clock = std::chrono::steady_clock;

// The files the run reads, with the keys that name them (for --overwrite's check).
std::vector<std::pair<std::string, std::string>> InputFilesOf(const Config& config) {
  std::vector<std::pair<std::string, std::string>> inputs;
  for (const std::string& path : ExpandDataFiles("data.train", config.data.train))
    inputs.emplace_back("data.train", path);
  for (const std::string& path : ExpandDataFiles("data.val", config.data.val)) inputs.emplace_back("data.val", path);
  if (!config.model.path.empty()) inputs.emplace_back("model.path", config.model.path);
  return inputs;
}

}  // namespace

// Every phase beats the watchdog as it starts (and long ones as they go): a rank stopped or
// stuck anywhere, from the first collective on, ends the job after runtime.watchdog_s.
Trainer::Trainer(const Config& config, const MpiWorld& world, const TrainOptions& options)
    : config_(config),
      watchdog_(std::make_unique<HangWatchdog>(config.runtime.watchdog_s)),
      world_(world),
      lead_(world.Rank() == 0),
      metrics_(config.output.dir, world.Rank() == 0) {
  Heartbeat("start-up: input files and run directory");
  StopHereForATest("start-up");
  const std::string checkpoint = PrepareRunDirectory(options);
  if (lead_) spdlog::info("clustertrain {}: {} ranks, run directory {}", CT_VERSION, world_.Size(), config_.output.dir);
  // Device, then cores and threads (before any LibTorch thread pool starts), reported by every
  // rank in rank order.
  Heartbeat("start-up: placement");
  device_ = PlaceThisRank(config_, world_).device;
  Heartbeat("loading data");
  StopHereForATest("loading data");
  const bool autotune = config_.train.batch_size == 0;  // auto, and not resumed (PrepareRunDirectory)
  if (autotune) {
    config_.train.batch_size = config_.train.autotune.min;  // the batches the search draws from
    if (lead_) {
      spdlog::info(
          "train.batch_size=auto: the data is read in batches of train.autotune.min={} for the search, "
          "then again in the size chosen",
          config_.train.autotune.min);
    }
  }
  LoadData();
  Heartbeat("start-up: model and gradient sync");
  BuildModelAndSync();
  if (autotune) ChooseBatchSize();
  BuildOptimizerAndSchedules();
  if (!checkpoint.empty()) {
    Heartbeat("start-up: resuming from a checkpoint");
    Resume(checkpoint);
  } else {
    if (options.resume == "auto" && lead_) {
      spdlog::info("--resume auto: no checkpoint in {}/checkpoints; starting from scratch", config_.output.dir);
    }
    metrics_.StartFresh();
  }
  if (lead_ && config_.output.tensorboard)
    tensorboard_ = std::make_unique<TensorBoardLog>(config_.output.dir, global_step_);
  test_hooks_ = std::make_unique<TrainerTestHooks>(lead_, global_step_);
  if (device_.is_cuda()) gpu_monitor_ = std::make_unique<GpuEpochMonitor>(device_.index());
  trace_ =
      std::make_unique<TraceWindow>(config_.output.trace_steps, world_, device_, config_.output.dir, TraceMetadata());
}

// What a trace's reader needs to know about the step: the backend and the buckets' bytes.
std::string Trainer::TraceMetadata() const {
  std::string bytes;
  for (const GradientBucket& bucket : sync_->Buckets()) {
    const int64_t element = config_.runtime.allreduce_precision == Precision::kBf16 ? 2 : bucket.grads.element_size();
    bytes += (bytes.empty() ? "" : ",") + std::to_string(bucket.grads.numel() * element);
  }
  return fmt::format(R"("backend":"{}","device":"{}","bucket_bytes":[{}],"accumulation_steps":{})", comm_->Name(),
                     device_.str(), bytes, config_.train.accumulation_steps);
}

// Start-up checks in order, each agreed over the ranks (one message naming the ranks and hosts
// it concerns): every rank sees the input files; rank 0 claims the run directory (lock, and no
// other run in it); every rank agrees on the checkpoint to resume from (returned; "" for a fresh
// start); rank 0 checks the settings against the checkpoint's and writes the resolved config.
std::string Trainer::PrepareRunDirectory(const TrainOptions& options) {
  const std::string& dir = config_.output.dir;
  const bool auto_batch = config_.train.batch_size == 0;
  RunAgreed(world_, [&] {
    CheckInputFiles(config_);
    CheckResumeTarget(options.resume, dir);
  });
  RunAgreed(world_, [&] {
    if (lead_) {
      run_directory_.emplace(
          RunClaim{dir, ContinuesRunIn(options.resume, dir), options.overwrite, InputFilesOf(config_)});
    }
  });
  // Rank 0 alone reads the candidates (a whole checkpoint each); the others take its choice.
  ResumePoint point;
  RunAgreed(world_, [&] {
    if (lead_) point = ChooseCheckpoint(options.resume, dir);
  });
  point.checkpoint = BroadcastString(world_.Comm(), point.checkpoint, 0);
  RunAgreed(world_, [&] {
    if (!lead_) return;
    if (!point.checkpoint.empty()) {
      ResumeChosenBatchSize(point.config_yaml);
      CheckConfigChanges(point.checkpoint, point.config_yaml, config_, options.allow_config_changes);
    }
    WriteFileAtomically(dir + "/config.yaml", ConfigToYaml(config_));
  });
  if (auto_batch && !point.checkpoint.empty()) {  // rank 0 took the checkpoint's size: every rank does
    config_.train.batch_size = std::stoll(BroadcastString(world_.Comm(), std::to_string(config_.train.batch_size), 0));
  }
  InitRunLogging(world_.Rank(), dir);
  return point.checkpoint;
}

// train.batch_size: auto, resuming: the size the checkpoint's run chose (never tuned again, also
// on another world size: the per-rank batch is kept, the lr rule follows the global batch).
void Trainer::ResumeChosenBatchSize(const std::string& checkpoint_yaml) {
  if (config_.train.batch_size != 0) return;
  config_.train.batch_size = LoadConfigText(checkpoint_yaml, "the checkpoint's config", {}).train.batch_size;
  spdlog::info("train.batch_size=auto: resuming with the size the run chose, {} per rank (not searched again)",
               config_.train.batch_size);
}

void Trainer::LoadData() {
  TrainingData data = LoadTrainingData(config_, world_, device_);
  train_ = std::move(data.train);
  val_ = std::move(data.val);
  steps_ = data.steps;
}

// train.batch_size: auto. The search leaves the model as it was built; the data is loaded again
// in batches of the size chosen, which config.yaml (and every checkpoint) then records.
void Trainer::ChooseBatchSize() {
  Heartbeat("batch size search");
  config_.train.batch_size = AutotuneBatchSize(
      config_.train.autotune,
      {*model_, *sync_, *train_, world_, device_, config_.train.precision, config_.train.accumulation_steps});
  train_.reset();  // its memory before the new batches'
  val_.reset();
  LoadData();
  if (!lead_) return;
  WriteFileAtomically(config_.output.dir + "/config.yaml", ConfigToYaml(config_));
  if (steps_ < 10) {  // the fastest batch for the hardware can be too large for this data
    spdlog::warn(
        "train.batch_size=auto chose {} per rank: {} optimizer step(s) per epoch; set train.autotune.max lower "
        "for more updates per epoch",
        config_.train.batch_size, steps_);
  }
}

// The same seed on every rank, then rank 0's weights broadcast to be certain; gradients are
// synchronised in buckets by the communicator the runtime settings choose.
void Trainer::BuildModelAndSync() {
  // On CUDA, before any autograd node exists: the stream every step runs (and is captured) on.
  step_stream_ = MakeStepStream(device_);
  torch::manual_seed(static_cast<uint64_t>(config_.train.seed));
  RunAgreed(world_, [&] {
    model_ = MakeModel(config_.model, train_->Fields());
    metric_names_ = model_->MetricNames();
    CheckMetricNames(metric_names_, config_.model.kind == ModelKind::kTorchScript
                                        ? "model.path='" + config_.model.path + "'"
                                        : std::string("model.kind=") + NameOf(config_.model.kind));
    monitor_ = ParseMonitor(config_.train.monitor, metric_names_);
  });
  model_->To(device_);
  RunAgreed(world_, [&] { ChooseBackend(config_.runtime, device_); });  // a bad choice: one message
  comm_ = MakeCommunicator(config_.runtime, world_, device_);
  const RuntimeConfig& runtime = config_.runtime;
  sync_ = std::make_unique<GradientSync>(
      model_->Parameters(), *comm_,
      SyncOptions{runtime.bucket_mb, runtime.overlap, runtime.allreduce_precision == Precision::kBf16});
  sync_->BroadcastParameters();
  if (lead_) {
    spdlog::info("model: {}, {} parameters; precision {}", model_->Describe(), sync_->NumElements(),
                 config_.train.precision == Precision::kBf16 ? "bf16 (autocast forward)" : "fp32");
    spdlog::info("gradients in {} bucket(s) of <= {} MiB, {}, sent as {}", sync_->NumBuckets(), runtime.bucket_mb,
                 runtime.overlap ? "reduced during backward" : "reduced after backward",
                 NameOf(runtime.allreduce_precision));
  }
}

// The lr for the global batch (scaling rule and warmup), then ReduceLROnPlateau from the
// scaled lr; early stopping uses the plateau's improvement test.
void Trainer::BuildOptimizerAndSchedules() {
  const TrainConfig& train = config_.train;
  const LrPolicy policy = MakeLrPolicy(train.lr, train.base_batch, train.batch_size, world_.Size(),
                                       train.accumulation_steps, train.lr_scaling, train.warmup_epochs, steps_);
  if (lead_) spdlog::info("lr: {}", policy.Derivation());
  lr_.emplace(policy, train.plateau);
  // The optimizer over flat parameter buffers laid out as the gradient buckets (the parameters
  // become views). Fused kernels on CUDA only: LibTorch's CPU kernel reads its step count with
  // item() every step, a host read that the no-sync invariant of the loop
  // (tests/e2e/run_outputs.sh) forbids.
  // On the CPU the ranks of a node split Adam's update (runtime.shard_optimizer).
  node_comm_ = MakeOptimizerShardCommunicator(config_.runtime, world_, device_);
  optimizer_ = MakeOptimizer(train, model_->Parameters(), sync_->Buckets(), /*fused=*/device_.is_cuda(),
                             /*one_pass=*/true, node_comm_.get());
  // Per node: a node whose /dev/shm cannot hold the split Adam's copy all-gathers instead, and a
  // node with one rank does not split.
  LogLinePerRanks(world_, "optimizer: " + optimizer_->Describe());
  step_runner_ = std::make_unique<StepRunner>(config_, world_, device_,
                                              StepParts{*model_, *sync_, *comm_, *optimizer_, *train_, *lr_});
  early_stop_.emplace(train.plateau, train.early_stop_patience);
  best_.emplace(train.plateau);
}

// Model, optimizer, schedules and metrics as the checkpoint left them; inside an epoch, that
// epoch's per-step losses so far.
void Trainer::Resume(const std::string& checkpoint) {
  TrainingState s;
  RunAgreed(world_, [&] {  // every rank reads the same file: one message if it is bad
    s = LoadCheckpoint(checkpoint, *model_, *optimizer_, device_,
                       "resume with the same model settings or start a new output.dir");
  });
  start_epoch_ = s.epoch;
  start_step_ = s.step_in_epoch;
  if (start_step_ > 0) {
    resumed_losses_ = ResumedStepLosses(s, checkpoint, world_.Rank(), world_.Size(), steps_, Columns());
  }
  global_step_ = s.global_step;
  const double scale = lr_->Restore(s.lr, global_step_);
  if (scale != 1.0 && lead_) {
    // Another world size (global batch), or an allowed change of the lr settings: the lrs follow
    // the new scaled lr by the same rule, plateau reductions kept.
    const std::string why =
        s.lr.global_batch != lr_->Policy().global_batch
            ? fmt::format("a {}-rank run (global batch {}) resumed on {} ranks (global batch {})", s.world_size,
                          s.lr.global_batch, world_.Size(), lr_->Policy().global_batch)
            : std::string("the lr settings changed (--allow-config-changes)");
    spdlog::warn("{}: the lr schedule's lrs x {:.4g}", why, scale);
  }
  early_stop_->Restore(s.early_stop);
  best_->Restore(s.best);
  metrics_.Restore(s.metrics);
  if (lead_) {
    spdlog::info("resumed from {}: epoch {} done{}, step {}; lr in use {:.3e}", checkpoint, s.epoch,
                 s.step_in_epoch ? " and " + std::to_string(s.step_in_epoch) + " steps of the next" : "", s.global_step,
                 lr_->Lr());
  }
}

void Trainer::Fit() {
  for (int64_t epoch = start_epoch_; epoch < config_.train.epochs; ++epoch) {
    // Each step: the stop flag (all-reduce), the gradient buckets (all-reduces), and the
    // non-finite check where train.nan_check_every asks for it (all-reduce).
    const EpochTotals totals = TrainEpoch(epoch);
    // The train means (all-reduce), buffers (broadcast), validation sums (all-reduce), the
    // peak memory (all-reduce) and, for TensorBoard, the per-step losses (all-reduce); rank 0
    // records the epoch.
    const EpochRecord record = EndEpoch(epoch, totals);
    // Every rank steps the schedules with the same all-reduced number: the same decisions.
    const bool stop_early = UpdateSchedules(record);
    const int64_t every = config_.output.checkpoint_every;
    if (stop_early || (every > 0 && record.epoch % every == 0) || record.epoch == config_.train.epochs) {
      SaveCheckpoint(record.epoch);
    }
    if (record.best_epoch == record.epoch) SaveBest(record.epoch);
    if (stop_early) break;
    spdlog::debug("epoch {} done: train {} val {}", record.epoch, record.train_loss, record.val_loss);
  }
  trace_->Close();
  Finish();
}

EpochTotals Trainer::TrainEpoch(int64_t epoch) {
  EpochTotals totals;
  totals.start = Clock::now();
  test_hooks_->StartEpoch();
  if (gpu_monitor_) gpu_monitor_->StartEpoch();
  const int64_t samples_per_step = config_.train.batch_size * config_.train.accumulation_steps * world_.Size();
  Progress progress(lead_, config_.output.progress, config_.output.log_every, epoch + 1, config_.train.epochs, steps_,
                    samples_per_step);
  // Per-step (loss, metrics...) stay on the device: no host synchronisation inside the loop.
  const bool resuming_here = epoch == start_epoch_ && start_step_ > 0;
  const auto float_options = at::TensorOptions().dtype(at::kFloat).device(device_);
  totals.step_losses = resuming_here ? resumed_losses_.to(device_) : at::zeros({steps_, Columns()}, float_options);
  train_->StartEpoch(epoch, resuming_here ? start_step_ * config_.train.accumulation_steps : 0);
  for (int64_t step = resuming_here ? start_step_ : 0; step < steps_; ++step, ++global_step_) {
    Heartbeat("training step");
    trace_->BeforeStep(global_step_);
    test_hooks_->BeforeStep(global_step_);
    if (StopRequestedEverywhere()) CheckpointAndStopForPreemption(epoch, step, totals.step_losses);
    step_runner_->Run(epoch, step, global_step_, totals);
    progress.Step(step + 1);
  }
  progress.Finish();
  return totals;
}

// Step boundary: stop together if any rank was signalled (one int all-reduced on the host).
bool Trainer::StopRequestedEverywhere() {
  trace::Span span("stop check", "step", trace::Timing::kHost);
  return world_.AnyRank(PreemptionRequested());
}

// Every rank's partial per-step losses go into the checkpoint, so that the resumed epoch's
// train loss is exactly what it would have been. Collective: a gather, then a barrier once
// rank 0 has written the file.
void Trainer::CheckpointAndStopForPreemption(int64_t epoch, int64_t step, const at::Tensor& step_losses) {
  // Before any rank can exit (they wait for each other in the barrier below).
  IgnoreFurtherPreemptionSignals();
  at::Tensor mine = step_losses.cpu().contiguous();
  at::Tensor all = at::empty({world_.Size(), steps_, Columns()}, at::kFloat);
  world_.GatherFloats(mine.data_ptr<float>(), static_cast<int>(mine.numel()), all.data_ptr<float>(), 0);
  SaveCheckpoint(epoch, step, all);
  const std::string checkpoint = CheckpointPath(config_.output.dir, epoch, step);
  const std::string where = " in epoch " + std::to_string(epoch + 1) + " after step " + std::to_string(step);
  // Ctrl-C on some rank: the user stopped the run; a batch system's signal asks for a requeue.
  if (world_.AnyRank(InterruptRequested())) {
    world_.Barrier();
    throw Preempted(
        "interrupted (SIGINT)" + where + ": checkpoint " + checkpoint + " written; continue the run with --resume auto",
        kExitInterrupted);
  }
  if (lead_) MarkPreempted(config_.output.dir, checkpoint);
  world_.Barrier();
  throw Preempted("preempted by a signal" + where + ": checkpoint " + checkpoint + " written; exit " +
                  std::to_string(kExitPreempted) + " asks for a requeue with --resume auto");
}

// The epoch's train means over ranks, validation, and the record (rank 0 writes it). A
// non-finite loss (all-reduced, so every rank sees it) stops every rank alike.
EpochRecord Trainer::EndEpoch(int64_t epoch, const EpochTotals& totals) {
  trace::Span span("epoch end", "epoch");
  const at::Tensor train_means = ReduceTrainLosses(epoch, totals);
  const double train_seconds = SecondsSince(totals.start);
  Heartbeat("validation");
  BroadcastBuffers();
  const auto val_start = Clock::now();
  const ValResult v = [&] {
    trace::Span validation("validation", "epoch");
    return Validate(*model_, *val_, config_.train.precision, *comm_);
  }();
  const EpochSeconds seconds{train_seconds, SecondsSince(val_start), SecondsSince(totals.start),
                             comm_->TakeTimedSeconds()};
  EpochRecord record = RecordOf(epoch, totals, train_means, v, seconds);
  record.max_rss_mb = world_.MaxOverRanks(ResidentMegabytes());
  if (gpu_monitor_) RecordGpuStats(record);  // every rank's device is CUDA, or none is
  best_->Observe(record.epoch, MonitoredValue(record, monitor_));
  record.best_epoch = best_->Epoch();
  PublishRecord(record, totals);
  if (!std::isfinite(v.loss)) {  // after the epoch's record
    throw Error("the validation loss became " + fmt::format("{}", v.loss) + " in epoch " + std::to_string(epoch + 1) +
                    " (the weights are no longer finite" +
                    (totals.skipped_steps ? ", " + std::to_string(totals.skipped_steps) + " steps skipped" : "") +
                    "); lower train.lr and resume from the last good checkpoint with --resume auto",
                kExitNonFinite, /*agreed=*/true);
  }
  test_hooks_->EndEpoch(record.epoch);
  return record;
}

// Buffers (a TorchScript module's BatchNorm running statistics) follow each rank's own batches:
// rank 0's go to every rank before validation and checkpoints, as DDP's broadcast_buffers does
// (here once an epoch, not every forward).
void Trainer::BroadcastBuffers() {
  for (NamedTensor& b : model_->State()) {
    if (b.is_buffer && b.tensor.is_floating_point()) comm_->Broadcast(b.tensor, 0);
  }
}

// The epoch's record from what the epoch measured (pure): train_means [1 + metrics] on the host,
// the validation result, and the clocks.
EpochRecord Trainer::RecordOf(int64_t epoch, const EpochTotals& totals, const at::Tensor& train_means,
                              const ValResult& v, const EpochSeconds& seconds) const {
  EpochRecord record;
  record.epoch = epoch + 1;
  record.global_step = global_step_;
  const float* t = train_means.data_ptr<float>();
  record.train_loss = t[0];
  record.metric_names = metric_names_;
  record.train_metrics.assign(t + 1, t + Columns());
  record.val_loss = v.loss;
  record.val_metrics = v.metrics;
  record.lr = lr_->Lr();
  record.global_batch = lr_->Policy().global_batch;
  record.world_size = world_.Size();
  record.train_seconds = seconds.train;
  record.val_seconds = seconds.val;
  record.samples_per_s = static_cast<double>(steps_ * record.global_batch) / seconds.train;
  record.epoch_seconds = seconds.epoch;
  record.data_seconds = totals.data_seconds;
  record.compute_seconds = totals.compute_seconds;
  record.comm_seconds = totals.comm_seconds;
  // On CUDA the host does not wait for the all-reduce: the device's own timing of the step's
  // wait for it is comm_seconds, and compute is the rest of the time not spent on data.
  if (seconds.device_comm) {
    record.comm_seconds = *seconds.device_comm;
    record.compute_seconds = std::max(0.0, seconds.train - record.data_seconds - record.comm_seconds);
  }
  record.skipped_steps = totals.skipped_steps;
  return record;
}

// The record published: the epoch line (rank 0), metrics.jsonl/csv, and TensorBoard with the
// per-step losses averaged over ranks (one all-reduce on every rank, one copy to the host).
void Trainer::PublishRecord(const EpochRecord& record, const EpochTotals& totals) {
  if (lead_) spdlog::info("{}", ConsoleLine(record, config_.train.epochs));
  metrics_.Append(record);
  if (!config_.output.tensorboard) return;
  at::Tensor step_losses = totals.step_losses.clone();
  comm_->AllReduceAverage(step_losses);
  if (tensorboard_) tensorboard_->WriteEpoch(record, step_losses.cpu(), config_.output.log_every);
}

// Collective: the largest peak memory of any rank's GPU, and the mean utilisation of the GPUs
// whose NVML could be read.
void Trainer::RecordGpuStats(EpochRecord& record) {
  const GpuEpochStats mine = gpu_monitor_->EndEpoch();
  record.gpu_mem_allocated_mb = world_.MaxOverRanks(mine.peak_allocated_mb);
  record.gpu_mem_reserved_mb = world_.MaxOverRanks(mine.peak_reserved_mb);
  const double measured = world_.SumOverRanks(mine.util_percent ? 1.0 : 0.0);
  const double sum = world_.SumOverRanks(mine.util_percent.value_or(0.0));
  if (measured > 0) record.gpu_util_percent = sum / measured;
}

// [1 + metrics] on the host: (loss, metrics...) averaged over steps and ranks, the epoch's one copy to the
// host. Skipped steps are NaN and left out (if every step was skipped the mean is NaN).
at::Tensor Trainer::ReduceTrainLosses(int64_t epoch, const EpochTotals& totals) {
  at::Tensor means =
      totals.skipped_steps > 0 ? at::nanmean(totals.step_losses, /*dim=*/0) : totals.step_losses.mean(/*dim=*/0);
  comm_->AllReduceAverage(means);
  at::Tensor host = means.cpu();
  const float loss = host.data_ptr<float>()[0];
  if (!std::isfinite(loss)) {
    throw Error("the training loss became " + fmt::format("{}", loss) + " in epoch " + std::to_string(epoch + 1) +
                    "; " + LowerLrAdvice(lr_->Lr()),
                kExitNonFinite, /*agreed=*/true);
  }
  return host;
}

// After warmup: ReduceLROnPlateau and early stopping see the epoch's train.monitor (the
// validation loss by default). Returns true when the run should stop early.
bool Trainer::UpdateSchedules(const EpochRecord& record) {
  if (lr_->InWarmup(global_step_)) return false;
  const double before = lr_->Lr();
  const double monitored = MonitoredValue(record, monitor_);
  if (lr_->EndEpoch(global_step_, monitored) && lead_) {
    spdlog::info("ReduceLROnPlateau: {} has not improved for {} epochs; lr {:.3e} -> {:.3e}", monitor_.Label(),
                 config_.train.plateau.patience + 1, before, lr_->Lr());
  }
  if (!early_stop_->ShouldStop(monitored)) return false;
  if (lead_) {
    spdlog::info("early stop after epoch {}: {} has not improved for {} epochs (train.early_stop_patience)",
                 record.epoch, monitor_.Label(), early_stop_->Snapshot().bad_epochs);
  }
  return true;
}

// Rank 0 writes checkpoints/epoch-NNNNNN[.step-SSSSSS].pt atomically and prunes old ones.
// Collective: a split optimizer's state is gathered first.
void Trainer::SaveCheckpoint(int64_t epochs_done, int64_t step_in_epoch, const at::Tensor& partial_losses) {
  optimizer_->GatherState();
  if (!lead_) return;
  Heartbeat("checkpoint");
  trace::Span span("checkpoint", "epoch", trace::Timing::kHost);
  ct::SaveCheckpoint(CheckpointPath(config_.output.dir, epochs_done, step_in_epoch), *model_, *optimizer_,
                     StateNow(epochs_done, step_in_epoch, partial_losses));
  PruneCheckpoints(config_.output.dir, config_.output.keep);
}

// The epoch just ended is the best so far: rank 0 replaces best.pt (the state dict, like
// model.pt) and checkpoints/best.pt (a full checkpoint, for resuming or predict), atomically.
// Collective, as SaveCheckpoint.
void Trainer::SaveBest(int64_t epochs_done) {
  optimizer_->GatherState();
  if (!lead_) return;
  Heartbeat("best model");
  trace::Span span("best model", "epoch", trace::Timing::kHost);
  SaveStateDict(model_->State(), config_.output.dir + "/best.pt");
  ct::SaveCheckpoint(BestCheckpointPath(config_.output.dir), *model_, *optimizer_, StateNow(epochs_done));
}

TrainingState Trainer::StateNow(int64_t epochs_done, int64_t step_in_epoch, const at::Tensor& partial_losses) const {
  TrainingState s;
  s.epoch = epochs_done;
  s.step_in_epoch = step_in_epoch;
  s.partial_losses = partial_losses;
  s.global_step = global_step_;
  s.world_size = world_.Size();
  s.lr = lr_->Snapshot();
  s.early_stop = early_stop_->Snapshot();
  s.best = best_->Snapshot();
  s.metrics = metrics_.Snapshot();
  s.model_fingerprint = model_->Fingerprint();
  s.config_yaml = ConfigToYaml(config_);
  return s;
}

// model.pt (and the model's own artifacts) from rank 0; every rank waits for them.
void Trainer::Finish() {
  Heartbeat("writing model.pt");
  if (lead_) {
    SaveStateDict(model_->State(), config_.output.dir + "/model.pt");
    model_->SaveArtifacts(config_.output.dir);
    spdlog::info("done in {:.1f} s: {}/model.pt, {}/metrics.jsonl", SecondsSince(run_start_), config_.output.dir,
                 config_.output.dir);
    if (best_->Epoch() > 0) {
      spdlog::info("best epoch {} ({} {:.6g}): {}/best.pt", best_->Epoch(), monitor_.Label(), best_->Snapshot().best,
                   config_.output.dir);
    }
  }
  world_.Barrier();
}

void RunTraining(const Config& config, const MpiWorld& world, const TrainOptions& options) {
  Config expanded = config;
  RunAgreed(world, [&] { expanded.output.dir = ExpandRunDirectory(config.output.dir, world.Size()); });
  InstallInterruptHandler();  // Ctrl-C: a checkpoint at the next step boundary
  Trainer trainer(expanded, world, options);
  trainer.Fit();
}

}  // namespace ct
