#include "train/trainer.h"

#include <torch/optim/adam.h>
#include <torch/utils.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <thread>

#include <unistd.h>

#include "cluster/agree.h"
#include "cluster/mpi_check.h"
#include "cluster/placement.h"
#include "cluster/preemption.h"
#include "comm/gradient_sync.h"
#include "comm/make_communicator.h"
#include "data/make_train_batches.h"
#include "data/shard_loader.h"
#include "model/make_model.h"
#include "model/precision.h"
#include "model/vae_loss.h"
#include "train/checkpoint.h"
#include "train/hang_watchdog.h"
#include "train/lr_policy.h"
#include "train/metrics.h"
#include "train/model_io.h"
#include "train/plateau.h"
#include "train/progress.h"
#include "train/validate.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/logging.h"
#include "util/process_memory.h"
#include "util/random.h"

namespace ct {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Whether `loss` (a scalar on the device) is finite on every rank: a host sync, which the user
// opts into with train.nan_check_every.
bool AllFinite(const at::Tensor& loss, const MpiWorld& world) {
  int finite = std::isfinite(loss.item<float>()) ? 1 : 0;
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &finite, 1, MPI_INT, MPI_MIN, world.Comm()));
  return finite == 1;
}

// CT_TEST_HOLD_AT_STEP: wait, alive to the watchdog, until this rank gets SIGUSR1 or SIGTERM.
void WaitForSignal(HangWatchdog& watchdog, int64_t global_step, bool lead) {
  if (lead) spdlog::info("held at global step {} (CT_TEST_HOLD_AT_STEP): waiting for SIGUSR1 or SIGTERM", global_step);
  while (!PreemptionRequested()) {
    watchdog.Beat("held for a test's signal");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void SetLearningRate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
}

// Keeps the header (if any) and the first `epochs` records of a metrics file (resume).
void KeepFirstRecords(const std::string& path, int64_t epochs, bool has_header) {
  std::ifstream in(path);
  std::string kept, line;
  for (int64_t n = 0; n < epochs + (has_header ? 1 : 0) && std::getline(in, line); ++n) kept += line + "\n";
  WriteFileAtomically(path, kept);
}

// "" when starting fresh; else the checkpoint to resume from (collective decision: the same on
// every rank, since all read the same directory).
std::string ResolveResume(const std::string& resume, const Config& config) {
  if (resume.empty()) return "";
  if (resume == "auto") return LatestCheckpoint(config.output.dir);
  if (!std::filesystem::is_regular_file(resume)) {
    throw ConfigError("--resume " + resume + ": no such checkpoint; use --resume auto for the newest in " +
                      config.output.dir + "/checkpoints");
  }
  return resume;
}

// Rank 0 creates the run directory and writes the resolved config; others wait for it.
void PrepareRunDirectory(const Config& config, const MpiWorld& world, bool resuming) {
  if (world.Rank() == 0) {
    std::error_code ec;
    std::filesystem::create_directories(config.output.dir, ec);
    if (ec) {
      throw Error("cannot create run directory '" + config.output.dir + "': " + ec.message() +
                  "; set output.dir to a writable path");
    }
    WriteFileAtomically(config.output.dir + "/config.yaml", ConfigToYaml(config));
    if (!resuming) std::filesystem::remove(config.output.dir + "/metrics.jsonl", ec);
  }
  MPI_CHECK(MPI_Barrier(world.Comm()));
  InitRunLogging(world.Rank(), config.output.dir);
}

}  // namespace

void RunTraining(const Config& config, const MpiWorld& world, const std::string& resume) {
  const auto run_start = Clock::now();
  std::string resume_path;
  RunAgreed(world, [&] { resume_path = ResolveResume(resume, config); });
  PrepareRunDirectory(config, world, !resume_path.empty());
  const bool lead = world.Rank() == 0;
  if (lead) spdlog::info("clustertrain {}: {} ranks, run directory {}", CT_VERSION, world.Size(), config.output.dir);

  // Device, then cores and threads (before any LibTorch thread pool starts), reported by every
  // rank in rank order.
  const c10::Device device = PlaceThisRank(config, world).device;

  // Data: each rank reads its own rows (data.sharding: in memory, or streamed in blocks).
  auto load_start = Clock::now();
  // A bad file fails every rank alike (or, for NaN rows, some ranks after all collective reads):
  // agreed per file, so that rank 0 prints one message and no rank waits in a collective.
  std::unique_ptr<TrainBatches> train;
  RunAgreed(world, [&] {
    train = MakeTrainBatches(config.data, config.train.batch_size, static_cast<uint64_t>(config.train.seed), world,
                             device);
  });
  std::optional<ShardLoader> val_rows;
  RunAgreed(world, [&] {
    val_rows.emplace(ShardLoader::Load(config.data.val, config.data.input_key, config.data.target_key, world.Comm(),
                                       device));
  });
  const ShardLoader& val = *val_rows;
  if (train->RowLength() != val.RowLength()) {
    throw Error("training rows have " + std::to_string(train->RowLength()) + " values but validation rows have " +
                    std::to_string(val.RowLength()) + " (" + config.data.train + " vs " + config.data.val + ")",
                kExitData, /*agreed=*/true);
  }
  const int64_t batch = config.train.batch_size;
  const bool bf16 = config.train.precision == "bf16";
  const int64_t accumulation = config.train.accumulation_steps;
  const int64_t check_every = config.train.nan_check_every;
  const int64_t steps = train->BatchesPerEpoch() / accumulation;  // optimizer steps
  if (steps == 0) {
    // Every rank computes the same from the same totals: one message, from rank 0.
    throw Error("train.batch_size=" + std::to_string(batch) + " x train.accumulation_steps=" +
                    std::to_string(accumulation) + " is larger than a rank's share of the " +
                    std::to_string(train->TotalRows()) + " training rows over " + std::to_string(world.Size()) +
                    " ranks (" + train->Describe() + "); lower train.batch_size or use fewer ranks",
                kExitUsage, /*agreed=*/true);
  }
  if (lead) {
    spdlog::info("data: {} train rows, {} val rows of length {}; {} steps per epoch ({:.1f} s to load)",
                 train->TotalRows(), val.TotalRows(), train->RowLength(), steps, SecondsSince(load_start));
    spdlog::info("data: {}", train->Describe());
  }

  // Model: same seed on every rank, then rank 0's weights broadcast to be certain.
  torch::manual_seed(static_cast<uint64_t>(config.train.seed));
  std::unique_ptr<Model> model;
  RunAgreed(world, [&] { model = MakeModel(config.model, train->RowDims(), train->TargetDims()); });
  model->To(device);
  RunAgreed(world, [&] { ChooseBackend(config.runtime, device); });  // a bad choice: one message
  std::unique_ptr<Communicator> comm = MakeCommunicator(config.runtime, world, device);
  GradientSync sync(model->Parameters(), *comm,
                    {config.runtime.bucket_mb, config.runtime.overlap, config.runtime.allreduce_precision == "bf16"});
  sync.BroadcastParameters();
  if (lead) {
    spdlog::info("model: {}, {} parameters; precision {}", model->Describe(), sync.NumElements(),
                 config.train.precision == "bf16" ? "bf16 (autocast forward)" : "fp32");
    spdlog::info("gradients in {} bucket(s) of <= {} MiB, {}, sent as {}", sync.NumBuckets(), config.runtime.bucket_mb,
                 config.runtime.overlap ? "reduced during backward" : "reduced after backward",
                 config.runtime.allreduce_precision);
  }

  const LrPolicy policy = MakeLrPolicy(config.train.lr, config.train.base_batch, batch, world.Size(), accumulation,
                                       config.train.lr_scaling, config.train.warmup_epochs, steps);
  if (lead) {
    spdlog::info("lr: {}", policy.Derivation(batch, world.Size(), accumulation, config.train.base_batch,
                                             config.train.lr_scaling, config.train.warmup_epochs));
  }
  torch::optim::Adam optimizer(model->Parameters(), torch::optim::AdamOptions(policy.WarmupLr(0)));
  // The plateau scheduler takes over from the scaled lr once warmup has ended.
  PlateauScheduler plateau(config.train.plateau, policy.scaled_lr);
  EarlyStopping early_stop(config.train.plateau, config.train.early_stop_patience);

  const std::string metrics_path = config.output.dir + "/metrics.jsonl";
  const std::string csv_path = config.output.dir + "/metrics.csv";
  const std::string fingerprint = model->Fingerprint();
  const std::string config_yaml = ConfigToYaml(config);
  int64_t start_epoch = 0;
  int64_t start_step = 0;      // > 0 when resuming inside an epoch (after preemption)
  at::Tensor resumed_losses;  // that epoch's per-step losses so far
  int64_t global_step = 0;
  double lr = policy.WarmupLr(0);
  if (!resume_path.empty()) {
    TrainingState s;
    RunAgreed(world, [&] {  // every rank reads the same file: one message if it is bad
      s = LoadCheckpoint(resume_path, *model, optimizer, device,
                         "resume with the same model settings or start a new output.dir");
    });
    start_epoch = s.epoch;
    start_step = s.step_in_epoch;
    if (start_step > 0) {
      // This rank's own partial losses; on another world size, the ranks' mean.
      resumed_losses = s.world_size == world.Size() ? s.partial_losses[world.Rank()] : s.partial_losses.mean(0);
      if (resumed_losses.size(0) != steps) {
        throw ConfigError("checkpoint '" + resume_path + "' stopped inside an epoch of " +
                          std::to_string(resumed_losses.size(0)) + " steps, but this run has " + std::to_string(steps) +
                          " steps per epoch; resume with the same data, batch size and world size, or from an "
                          "epoch-boundary checkpoint (epoch-NNNNNN.pt)");
      }
    }
    global_step = s.global_step;
    double scale = 1.0;
    if (s.global_batch != policy.global_batch) {
      // Another world size: the lr follows the new global batch by the same rule.
      scale = policy.scaled_lr /
              ScaledLr(config.train.lr, config.train.base_batch, s.global_batch, config.train.lr_scaling);
      if (lead) {
        spdlog::warn("resuming a {}-rank run (global batch {}) on {} ranks (global batch {}): lr x {:.4g}",
                     s.world_size, s.global_batch, world.Size(), policy.global_batch, scale);
      }
    }
    lr = policy.InWarmup(global_step) ? policy.WarmupLr(global_step) : s.lr * scale;
    plateau.Restore(s.plateau_lr * scale, s.plateau_best, s.plateau_bad_epochs, s.plateau_cooldown);
    early_stop.Restore(s.early_best, s.early_bad_epochs);
    if (lead) {
      spdlog::info("resumed from {}: epoch {} done{}, step {}, lr {:.3e}", resume_path, s.epoch,
                   s.step_in_epoch ? " and " + std::to_string(s.step_in_epoch) + " steps of the next" : "",
                   s.global_step, lr);
      KeepFirstRecords(metrics_path, s.epoch, /*has_header=*/false);
      KeepFirstRecords(csv_path, s.epoch, /*has_header=*/true);
    }
  } else if (resume == "auto" && lead) {
    spdlog::info("--resume auto: no checkpoint in {}/checkpoints; starting from scratch", config.output.dir);
  }
  if (lead && resume_path.empty()) WriteFileAtomically(csv_path, CsvHeader() + "\n");
  const auto float_options = at::TensorOptions().dtype(at::kFloat).device(device);

  // From here every rank beats at each step, validation and checkpoint; one that stops ends the job.
  HangWatchdog watchdog(config.runtime.watchdog_s);
  const int64_t hold_step = TestHoldStep();  // -1 outside preemption tests
  const int64_t first_global_step = global_step;
  auto save_checkpoint = [&](int64_t epochs_done, int64_t step_in_epoch = 0, const at::Tensor& partial = {}) {
    if (!lead) return;
    watchdog.Beat("checkpoint");
    TrainingState s;
    s.epoch = epochs_done;
    s.step_in_epoch = step_in_epoch;
    s.partial_losses = partial;
    s.global_step = global_step;
    s.lr = lr;
    s.plateau_lr = plateau.Lr();
    s.plateau_best = plateau.Best();
    s.plateau_bad_epochs = plateau.BadEpochs();
    s.plateau_cooldown = plateau.CooldownCounter();
    s.early_best = early_stop.Best();
    s.early_bad_epochs = early_stop.EpochsWithoutImprovement();
    s.world_size = world.Size();
    s.global_batch = policy.global_batch;
    s.model_fingerprint = fingerprint;
    s.config_yaml = config_yaml;
    SaveCheckpoint(CheckpointPath(config.output.dir, epochs_done, step_in_epoch), *model, optimizer, s);
    PruneCheckpoints(config.output.dir, config.output.keep);
  };

  for (int64_t epoch = start_epoch; epoch < config.train.epochs; ++epoch) {
    const auto epoch_start = Clock::now();
    Progress progress(lead, config.output.progress, config.output.log_every, epoch + 1, config.train.epochs, steps,
                      batch * accumulation * world.Size());
    // Per-step (loss, mse, kl) stay on the device: no host synchronisation inside the loop.
    const bool resuming_here = epoch == start_epoch && start_step > 0;
    at::Tensor step_losses = resuming_here ? resumed_losses.to(device) : at::zeros({steps, 3}, float_options);
    train->StartEpoch(epoch, resuming_here ? start_step * accumulation : 0);
    double data_seconds = 0, compute_seconds = 0, comm_seconds = 0;
    int64_t skipped_steps = 0;
    for (int64_t step = resuming_here ? start_step : 0; step < steps; ++step, ++global_step) {
      watchdog.Beat("training step");
      // A test holds here until its signal arrives (not again when resumed at this very step).
      if (global_step == hold_step && global_step != first_global_step) WaitForSignal(watchdog, global_step, lead);
      // Step boundary: stop together if any rank was signalled (one int all-reduced on the host).
      int stop = PreemptionRequested() ? 1 : 0;
      if (world.Size() > 1) MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &stop, 1, MPI_INT, MPI_MAX, world.Comm()));
      if (stop) {
        // Every rank's partial per-step losses go into the checkpoint, so that the resumed
        // epoch's train loss is exactly what it would have been.
        at::Tensor mine = step_losses.cpu().contiguous();
        at::Tensor all = at::empty({world.Size(), steps, 3}, at::kFloat);
        MPI_CHECK(MPI_Gather(mine.data_ptr<float>(), static_cast<int>(mine.numel()), MPI_FLOAT, all.data_ptr<float>(),
                             static_cast<int>(mine.numel()), MPI_FLOAT, 0, world.Comm()));
        save_checkpoint(epoch, step, all);
        MPI_CHECK(MPI_Barrier(world.Comm()));
        throw Preempted("preempted by a signal in epoch " + std::to_string(epoch + 1) + " after step " +
                        std::to_string(step) + ": checkpoint " + CheckpointPath(config.output.dir, epoch, step) +
                        " written; exit " + std::to_string(kExitPreempted) + " asks for a requeue with --resume auto");
      }
      // Sampling noise: per rank and per step, so that a resumed run draws the same noise.
      torch::manual_seed(MixSeed(static_cast<uint64_t>(config.train.seed), 0xC0FFEE + static_cast<uint64_t>(global_step),
                                 static_cast<uint64_t>(world.Rank())));
      if (policy.InWarmup(global_step)) lr = policy.WarmupLr(global_step);
      SetLearningRate(optimizer, lr);
      optimizer.zero_grad();
      // K micro-batches: gradients of loss/K accumulate locally; only the last backward
      // communicates (its buckets all-reduced as they fill when runtime.overlap is on).
      for (int64_t micro = 0; micro < accumulation; ++micro) {
        auto t0 = Clock::now();
        Batch b = train->Next();  // [B, L] each
        auto t1 = Clock::now();
        VaeOutput out;
        {
          const AutocastScope autocast(bf16, device.type());
          out = model->Forward(b.input);  // samples its latent from the generator seeded above
        }
        PerSampleLoss loss = VaePerSampleLoss(out, b.target);
        at::Tensor total = VaeBatchLoss(loss, config.model.beta);
        sync.PrepareBackward(/*communicate=*/micro == accumulation - 1);
        (total / static_cast<double>(accumulation)).backward();
        step_losses[step] += at::stack({total.detach(), loss.mse.mean().detach(), loss.kl.mean().detach()}) /
                             static_cast<double>(accumulation);
        data_seconds += std::chrono::duration<double>(t1 - t0).count();
        compute_seconds += SecondsSince(t1);
      }
      auto t2 = Clock::now();
      sync.AverageGradients();
      auto t3 = Clock::now();
      if (check_every > 0 && (global_step + 1) % check_every == 0 && !AllFinite(step_losses[step][0], world)) {
        // Opted in (train.nan_check_every): every rank saw the same all-reduced verdict.
        const std::string where = "epoch " + std::to_string(epoch + 1) + " step " + std::to_string(step + 1);
        if (config.train.on_nonfinite == "stop") {
          throw Error("the training loss became non-finite on some rank in " + where + "; lower train.lr (now " +
                          fmt::format("{:.3g}", lr) + ") or add warmup (train.warmup_epochs), and resume from the last "
                          "good checkpoint with --resume auto",
                      kExitNonFinite, /*agreed=*/true);
        }
        ++skipped_steps;
        step_losses[step].fill_(std::numeric_limits<float>::quiet_NaN());  // left out of the epoch's means
        if (lead && skipped_steps <= 3) {
          spdlog::warn("non-finite loss in {}: step skipped (train.on_nonfinite=skip){}", where,
                       skipped_steps == 3 ? "; further skips this epoch are counted in skipped_steps" : "");
        }
      } else {
        optimizer.step();
      }
      comm_seconds += std::chrono::duration<double>(t3 - t2).count();
      compute_seconds += SecondsSince(t3);
      progress.Step(step + 1);
    }
    progress.Finish();
    // Skipped steps are NaN: left out (if every step was skipped the mean is NaN and stops the run).
    at::Tensor train_means = skipped_steps > 0 ? at::nanmean(step_losses, /*dim=*/0) : step_losses.mean(/*dim=*/0);
    comm->AllReduceAverage(train_means);
    at::Tensor train_host = train_means.cpu();  // the epoch's one copy to the host
    // All-reduced, so every rank sees the same value and stops together.
    if (!std::isfinite(train_host.data_ptr<float>()[0])) {
      throw Error("the training loss became " + fmt::format("{}", train_host.data_ptr<float>()[0]) + " in epoch " +
                      std::to_string(epoch + 1) + "; lower train.lr (now " + fmt::format("{:.3g}", lr) +
                      ") or add warmup (train.warmup_epochs), and resume from the last good checkpoint with "
                      "--resume auto",
                  kExitNonFinite, /*agreed=*/true);
    }
    const double train_seconds = SecondsSince(epoch_start);

    watchdog.Beat("validation");
    // Buffers (a TorchScript module's BatchNorm running statistics) follow each rank's own
    // batches: rank 0's go to every rank before validation and checkpoints, as DDP's
    // broadcast_buffers does (here once an epoch, not every forward).
    for (NamedTensor& b : model->State()) {
      if (b.is_buffer && b.tensor.is_floating_point()) comm->Broadcast(b.tensor, 0);
    }
    const auto val_start = Clock::now();
    const ValLoss v = Validate(*model, val, config.model.beta, bf16, *comm);
    const double val_seconds = SecondsSince(val_start);


    EpochRecord record;
    record.epoch = epoch + 1;
    record.global_step = global_step;
    const float* t = train_host.data_ptr<float>();
    record.train_loss = t[0];
    record.train_mse = t[1];
    record.train_kl = t[2];
    record.val_loss = v.loss;
    record.val_mse = v.mse;
    record.val_kl = v.kl;
    record.lr = lr;
    record.global_batch = policy.global_batch;
    record.world_size = world.Size();
    record.samples_per_s = static_cast<double>(steps * policy.global_batch) / train_seconds;
    record.train_seconds = train_seconds;
    record.val_seconds = val_seconds;
    record.epoch_seconds = SecondsSince(epoch_start);
    record.data_seconds = data_seconds;
    record.compute_seconds = compute_seconds;
    record.comm_seconds = comm_seconds;
    record.skipped_steps = skipped_steps;
    record.max_rss_mb = ResidentMegabytes();
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &record.max_rss_mb, 1, MPI_DOUBLE, MPI_MAX, world.Comm()));
    if (lead) {
      spdlog::info("{}", ConsoleLine(record, config.train.epochs));
      AppendLine(metrics_path, ToJson(record));
      AppendLine(csv_path, ToCsv(record));
    }

    if (!std::isfinite(v.loss)) {  // all-reduced: every rank stops here, after the epoch's record
      throw Error("the validation loss became " + fmt::format("{}", v.loss) + " in epoch " +
                      std::to_string(epoch + 1) + " (the weights are no longer finite" +
                      (skipped_steps ? ", " + std::to_string(skipped_steps) + " steps skipped" : std::string()) +
                      "); lower train.lr and resume from the last good checkpoint with --resume auto",
                  kExitNonFinite, /*agreed=*/true);
    }
    // Every rank steps the scheduler with the same all-reduced number: same decision.
    // Warmup owns the lr until it ends; the plateau logic counts only epochs after it.
    if (!policy.InWarmup(global_step)) {
      const double before = plateau.Lr();
      if (plateau.Step(v.loss) && lead) {
        spdlog::info("ReduceLROnPlateau: val loss has not improved for {} epochs; lr {:.3e} -> {:.3e}",
                     config.train.plateau.patience + 1, before, plateau.Lr());
      }
      lr = plateau.Lr();
      if (early_stop.ShouldStop(v.loss)) {
        if (lead) {
          spdlog::info("early stop after epoch {}: val loss has not improved for {} epochs "
                       "(train.early_stop_patience)", record.epoch, early_stop.EpochsWithoutImprovement());
        }
        save_checkpoint(record.epoch);
        break;
      }
    }
    const int64_t every = config.output.checkpoint_every;
    if ((every > 0 && record.epoch % every == 0) || record.epoch == config.train.epochs) save_checkpoint(record.epoch);
    spdlog::debug("epoch {} done: train {} val {}", record.epoch, record.train_loss, record.val_loss);
  }

  if (lead) {
    SaveStateDict(model->State(), config.output.dir + "/model.pt");
    model->SaveArtifacts(config.output.dir);
    spdlog::info("done in {:.1f} s: {}/model.pt, {}", SecondsSince(run_start), config.output.dir, metrics_path);
  }
  MPI_CHECK(MPI_Barrier(world.Comm()));
}

}  // namespace ct
