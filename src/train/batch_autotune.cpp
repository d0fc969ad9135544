#include "train/batch_autotune.h"

#include <torch/torch.h>

#include <chrono>
#include <memory>
#include <vector>

#include "cluster/gpu_epoch_stats.h"
#include "cluster/gpu_pci.h"
#include "model/forward.h"
#include "train/batch_choice.h"
#include "train/memory_check.h"
#include "util/error.h"
#include "util/heartbeat.h"
#include "util/logging.h"
#include "util/process_memory.h"

namespace ct {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kUntimedSteps = 2;

// Batches of any multiple of the source's batch rows: that many of its batches, concatenated; the
// source's next epoch when one runs out.
class RowFeeder {
 public:
  explicit RowFeeder(TrainBatches& batches) : batches_(batches) {}
  void Restart() {
    epoch_ = 0;
    served_ = 0;
    batches_.StartEpoch(0, 0);
  }
  Batch Take(int64_t pieces) {
    std::vector<Batch> parts;
    for (int64_t i = 0; i < pieces; ++i) parts.push_back(Next());
    if (pieces == 1) return parts[0];
    Batch out;
    out.names = parts[0].names;
    for (size_t f = 0; f < out.names.size(); ++f) {
      std::vector<at::Tensor> field;
      for (const Batch& part : parts) field.push_back(part.tensors[f]);
      out.tensors.push_back(at::cat(field));
    }
    return out;
  }

 private:
  Batch Next() {
    if (served_ == batches_.BatchesPerEpoch()) {
      batches_.StartEpoch(++epoch_, 0);
      served_ = 0;
    }
    ++served_;
    return batches_.Next();
  }
  TrainBatches& batches_;
  int64_t epoch_ = 0, served_ = 0;
};

// The memory a step takes beyond what the rank held when the search began.
class MemoryProbe {
 public:
  explicit MemoryProbe(const c10::Device& device) {
    if (device.is_cuda()) {
      gpu_ = std::make_unique<GpuEpochMonitor>(device.index());
      gpu_->StartEpoch();  // the peak is now what is allocated
      baseline_ = gpu_->EndEpoch().peak_allocated_mb * kMiB;
      const std::optional<int64_t> free = GpuFreeBytes(device.index());
      available_ = free ? static_cast<double>(*free) : 0;
    } else {
      ResetPeakResident();
      baseline_ = PeakResidentBytes();
    }
  }
  double Available(const MpiWorld& world) const { return gpu_ ? available_ : HostBytesPerRank(world.LocalSize()); }
  void StartStep() {
    if (gpu_) {
      gpu_->StartEpoch();
    } else {
      ResetPeakResident();
    }
  }
  double PeakBeyondStart() {
    const double peak = gpu_ ? gpu_->EndEpoch().peak_allocated_mb * kMiB : PeakResidentBytes();
    return std::max(0.0, peak - baseline_);
  }

 private:
  static constexpr double kMiB = 1024.0 * 1024.0;
  std::unique_ptr<GpuEpochMonitor> gpu_;
  double baseline_ = 0;
  double available_ = 0;
};

void Synchronize(const c10::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

// Forward, backward with its all-reduces, and the gradients zeroed: a step that changes nothing.
void UnappliedStep(const AutotuneParts& parts, const Batch& batch) {
  parts.sync.PrepareBackward(/*communicate=*/true);
  const ModelOutput out = ForwardAndLoss(parts.model, batch, parts.precision);
  out.loss.backward();
  parts.sync.AverageGradients();
  c10::NoGradGuard no_grad;
  for (const GradientBucket& bucket : parts.sync.Buckets()) bucket.grads.zero_();
}

BatchMeasurement Measure(int64_t batch, int64_t unit, int64_t steps, const AutotuneParts& parts, RowFeeder& feeder,
                         MemoryProbe& memory) {
  feeder.Restart();
  memory.StartStep();
  Clock::time_point start;
  for (int64_t i = 0; i < kUntimedSteps + steps; ++i) {
    Heartbeat("batch size search");
    if (i == kUntimedSteps) {
      Synchronize(parts.device);
      start = Clock::now();
    }
    UnappliedStep(parts, feeder.Take(batch / unit));
  }
  Synchronize(parts.device);
  const double seconds = parts.world.MaxOverRanks(std::chrono::duration<double>(Clock::now() - start).count());
  BatchMeasurement m;
  m.batch = batch;
  m.samples_per_s = static_cast<double>(batch * steps * parts.world.Size()) / seconds;
  m.memory_bytes = parts.world.MaxOverRanks(memory.PeakBeyondStart());
  return m;
}

std::string Table(const std::vector<BatchMeasurement>& measured) {
  std::string table =
      "batch_size auto: batch per rank, samples/s over all ranks, memory a step needs beyond the rank's before";
  for (const BatchMeasurement& m : measured) {
    table += fmt::format("\n  {:>6}  {:>12.0f}  {:>8.1f} MiB", m.batch, m.samples_per_s, m.memory_bytes / 1048576.0);
  }
  return table;
}

}  // namespace

int64_t AutotuneBatchSize(const AutotuneConfig& tune, const AutotuneParts& parts) {
  const int64_t unit = tune.min;
  // The model's buffers as they are: a forward pass in training mode may move them.
  std::vector<at::Tensor> buffers;
  for (const NamedTensor& t : parts.model.State()) {
    if (t.is_buffer) buffers.push_back(t.tensor.clone());
  }
  RowFeeder feeder(parts.batches);
  MemoryProbe memory(parts.device);
  BatchSearchLimits limits;
  limits.max_batch = std::min(tune.max, parts.batches.BatchesPerEpoch() * unit / parts.accumulation);
  limits.memory_cap = tune.memory_fraction * -parts.world.MaxOverRanks(-memory.Available(parts.world));
  limits.min_gain = tune.min_gain;
  std::vector<BatchMeasurement> measured;
  BatchVerdict verdict;
  for (int64_t batch = unit;; batch *= 2) {
    measured.push_back(Measure(batch, unit, tune.steps, parts, feeder, memory));
    verdict = JudgeBatchSearch(measured, limits);
    if (!verdict.measure_next) break;
  }
  {
    c10::NoGradGuard no_grad;
    size_t i = 0;
    for (const NamedTensor& t : parts.model.State()) {
      if (t.is_buffer) t.tensor.copy_(buffers[i++]);
    }
  }
  if (parts.world.Rank() == 0) spdlog::info("{}", Table(measured));
  if (verdict.choice == 0) {
    throw ConfigError("train.batch_size=auto: not even train.autotune.min=" + std::to_string(unit) +
                          " fits: " + verdict.reason + "; lower train.autotune.min or raise memory_fraction",
                      /*agreed=*/true);
  }
  if (parts.world.Rank() == 0) {
    spdlog::info("batch_size auto: chose {} per rank ({})", verdict.choice, verdict.reason);
  }
  return verdict.choice;
}

}  // namespace ct
