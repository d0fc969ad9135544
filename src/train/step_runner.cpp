#include "train/step_runner.h"

#include <torch/torch.h>

#include <cmath>
#include <limits>

#include "model/forward.h"
#include "util/error.h"
#include "util/logging.h"
#include "util/random.h"
#include "util/trace.h"

namespace ct {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

std::string LowerLrAdvice(double lr) {
  return "lower train.lr (now " + fmt::format("{:.3g}", lr) +
         ") or add warmup (train.warmup_epochs), and resume from the last good checkpoint with --resume auto";
}

StepRunner::StepRunner(const Config& config, const MpiWorld& world, c10::Device device, const StepParts& parts)
    : train_(config.train), world_(world), parts_(parts) {
  GraphFacts graph;
  graph.cuda = device.is_cuda();
  graph.built = CudaGraphsBuilt();
  graph.torchscript = config.model.kind == ModelKind::kTorchScript;
  graph.bf16 = train_.precision == Precision::kBf16;
  graph.accumulation = train_.accumulation_steps;
  graph.capturable_optimizer = parts_.optimizer.Capturable();
  graph.skip_nonfinite = train_.nan_check_every > 0 && train_.on_nonfinite == OnNonFinite::kSkip;
  const GraphDecision captured = DecideCudaGraph(config.runtime.cuda_graph, graph);
  if (world_.Rank() == 0) spdlog::info("{}", captured.reason);
  if (captured.use) {
    graph_step_ = MakeCudaGraphStep(device, /*warmup_steps=*/3);
    lr_on_device_ = at::zeros({}, at::TensorOptions().dtype(at::kFloat).device(device));
  }
  // On the CPU zeroing the gradients is a pass over memory; on a GPU it is one small kernel
  // (and part of a captured graph), so it stays.
  if (device.is_cpu()) stale_ = std::make_unique<StaleGradients>(parts_.optimizer.Params());
}

void StepRunner::Run(int64_t epoch, int64_t step, int64_t global_step, EpochTotals& totals) {
  // Sampling noise: per rank and per step, so that a resumed run draws the same noise.
  torch::manual_seed(MixSeed(static_cast<uint64_t>(train_.seed), 0xC0FFEE + static_cast<uint64_t>(global_step),
                             static_cast<uint64_t>(world_.Rank())));
  if (graph_step_) {
    Captured(epoch, step, global_step, totals);
  } else {
    Eager(epoch, step, global_step, totals);
  }
}

// K micro-batches whose gradients of loss/K accumulate locally (only the last backward
// communicates, its buckets all-reduced as they fill when runtime.overlap is on), the gradient
// average, the opt-in non-finite check, and the update.
void StepRunner::Eager(int64_t epoch, int64_t step, int64_t global_step, EpochTotals& totals) {
  const int64_t accumulation = train_.accumulation_steps;
  trace::Span step_span("step", "step");
  step_span.Set("step", global_step + 1);
  ForgetGradients();
  for (int64_t micro = 0; micro < accumulation; ++micro) {
    const auto t0 = Clock::now();
    Batch b;
    {
      trace::Span span("batch", "data");
      b = parts_.batches.Next();  // [B, L] each
    }
    const auto t1 = Clock::now();
    ModelOutput out;
    {
      trace::Span span("forward", "compute");
      out = ForwardAndLoss(parts_.model, b, train_.precision);  // its latent from the generator seeded by Run
    }
    {
      trace::Span span("backward", "compute");  // with the buckets launched as they fill
      parts_.sync.PrepareBackward(/*communicate=*/micro == accumulation - 1);
      // Without accumulation (K = 1) no division: x / 1 is x, and it would add an autograd node
      // and a dozen operator calls to every step.
      const double k = static_cast<double>(accumulation);
      (accumulation == 1 ? out.loss : out.loss / k).backward();
      at::Tensor means = LossAndMetricMeans(out);
      if (accumulation > 1) means.div_(k);
      totals.step_losses[step] += means;
    }
    totals.data_seconds += SecondsBetween(t0, t1);
    totals.compute_seconds += SecondsBetween(t1, Clock::now());
  }
  if (stale_) stale_->ZeroUnwritten();  // parameters this step's backward did not use
  const auto t2 = Clock::now();
  {
    trace::Span span("gradient wait", "comm");  // the buckets not yet launched, then every bucket's end
    parts_.comm.BeginTimedSpan();
    parts_.sync.AverageGradients();
    parts_.comm.EndTimedSpan();
  }
  const auto t3 = Clock::now();
  trace::Span span("optimizer", "compute");
  if (train_.clip_grad_norm > 0) parts_.sync.ClipGradNorm(train_.clip_grad_norm);
  if (NonFiniteEverywhere(step, global_step, totals)) {
    HandleNonFinite(epoch, step, totals);
  } else {
    parts_.optimizer.Step(parts_.lr.ForStep(global_step));
  }
  totals.comm_seconds += SecondsBetween(t2, t3);
  totals.compute_seconds += SecondsBetween(t3, Clock::now());
}

// The gradients of the step before are not added to: zeroed (GPU), or replaced by their first
// writer in this step's backward (CPU; model/stale_gradients.h).
void StepRunner::ForgetGradients() {
  if (stale_) {
    stale_->MarkAll();
  } else {
    parts_.optimizer.ZeroGrad();
  }
}

// runtime.cuda_graph: the step replayed from one CUDA graph (train/cuda_graph_step.h). What
// differs per step is set on the device before the replay: the batch (copied into the graph's
// buffers), the learning rate, the noise's seed (set by Run). The all-reduce runs inside the
// graph, so comm_seconds is not split out of compute_seconds. Nothing but the batch copy and the
// lr fill is launched outside the graph, and nothing waits on the host.
void StepRunner::Captured(int64_t epoch, int64_t step, int64_t global_step, EpochTotals& totals) {
  trace::Span step_span("step", "step");  // host time: the replay's launch, not its run on the GPU
  step_span.Set("step", global_step + 1);
  const auto t0 = Clock::now();
  Batch b;
  {
    trace::Span span("batch", "data");
    b = parts_.batches.Next();  // [B, L] each
  }
  const auto t1 = Clock::now();
  trace::Span span("graph replay", "compute");
  lr_on_device_.fill_(parts_.lr.ForStep(global_step));
  const at::Tensor losses = graph_step_->Run(b, [this](const Batch& batch) { return BodyForGraph(batch); });
  parts_.optimizer.CountStep();
  totals.step_losses[step] += losses;
  // on_nonfinite=stop only (skip never captures): the update has run, the run stops anyway.
  if (NonFiniteEverywhere(step, global_step, totals)) HandleNonFinite(epoch, step, totals);
  totals.data_seconds += SecondsBetween(t0, t1);
  totals.compute_seconds += SecondsBetween(t1, Clock::now());
}

// What the graph holds: one whole step on `batch`, its loss and metrics [1 + metrics] returned.
at::Tensor StepRunner::BodyForGraph(const Batch& batch) {
  parts_.optimizer.ZeroGrad();
  const ModelOutput out = ForwardAndLoss(parts_.model, batch, train_.precision);
  parts_.sync.PrepareBackward(/*communicate=*/true);
  out.loss.backward();
  parts_.sync.AverageGradients();
  if (train_.clip_grad_norm > 0) parts_.sync.ClipGradNorm(train_.clip_grad_norm);
  parts_.optimizer.StepOnDevice(lr_on_device_);
  return LossAndMetricMeans(out);
}

// Opted in (train.nan_check_every, a host sync, at every N-th global step): whether some rank's
// loss of this step is not finite, the same all-reduced verdict on every rank.
bool StepRunner::NonFiniteEverywhere(int64_t step, int64_t global_step, const EpochTotals& totals) {
  const int64_t every = train_.nan_check_every;
  if (every <= 0 || (global_step + 1) % every != 0) return false;
  return world_.AnyRank(!std::isfinite(totals.step_losses[step][0].item<float>()));
}

// train.on_nonfinite: stop the run, or leave the step out (not applied; NaN losses, which the
// epoch's means skip) and count it.
void StepRunner::HandleNonFinite(int64_t epoch, int64_t step, EpochTotals& totals) {
  const std::string where = "epoch " + std::to_string(epoch + 1) + " step " + std::to_string(step + 1);
  if (train_.on_nonfinite == OnNonFinite::kStop) {
    throw Error("the training loss became non-finite on some rank in " + where + "; " + LowerLrAdvice(parts_.lr.Lr()),
                kExitNonFinite, /*agreed=*/true);
  }
  ++totals.skipped_steps;
  totals.step_losses[step].fill_(std::numeric_limits<float>::quiet_NaN());
  if (world_.Rank() == 0 && totals.skipped_steps <= 3) {
    spdlog::warn("non-finite loss in {}: step skipped (train.on_nonfinite=skip){}", where,
                 totals.skipped_steps == 3 ? "; further skips this epoch are counted in skipped_steps" : "");
  }
}

}  // namespace ct
