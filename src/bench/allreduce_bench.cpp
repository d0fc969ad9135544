#include "bench/allreduce_bench.h"

#include <torch/cuda.h>
#include <torch/optim/adam.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include "cluster/mpi_check.h"
#include "cluster/placement.h"
#include "comm/gradient_sync.h"
#include "comm/make_communicator.h"
#include "model/vae_loss.h"
#include "model/vae_mlp.h"
#include "util/logging.h"
#include "util/median.h"

namespace ct {
namespace {

struct Variant {
  Variant(std::string name_, int64_t messages_, std::function<void()> run_, std::function<void()> prepare_ = {})
      : name(std::move(name_)), messages(messages_), run(std::move(run_)), prepare(std::move(prepare_)) {}
  std::string name;
  int64_t messages;
  std::function<void()> run;      // timed
  std::function<void()> prepare;  // before each run, untimed
  std::vector<double> seconds;
};

// Runs every variant `iterations` times, round-robin so that the machine's drift hits all alike.
// Each timed run follows an untimed one of the same variant, so that every variant finds its
// buffers in cache as a training step finds the gradients backward just wrote (otherwise the
// variant after another that used the same buffer gains). Each timing starts together on all
// ranks and ends when this rank's result is usable.
void TimeInterleaved(std::vector<Variant>& variants, int iterations, Communicator& comm, const c10::Device& device) {
  const auto finish = [&] {
    if (device.is_cuda()) torch::cuda::synchronize(device.index());
  };
  for (int i = 0; i < iterations; ++i) {
    for (Variant& v : variants) {
      if (v.prepare) v.prepare();
      v.run();  // untimed: warms caches (and, the first time, buffers, connections, threads)
      if (v.prepare) v.prepare();
      finish();
      comm.Barrier();
      const auto start = std::chrono::steady_clock::now();
      v.run();
      finish();
      v.seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }
  // The slowest rank's time is the collective's time.
  for (Variant& v : variants) {
    at::Tensor t = at::tensor(v.seconds, at::kDouble);
    at::Tensor all = comm.AllGather(t.to(device)).cpu();  // the backend's device: the CPU for MPI
    v.seconds = std::vector<double>(all.size(1));
    at::Tensor slowest = std::get<0>(all.max(0)).contiguous();
    std::copy(slowest.data_ptr<double>(), slowest.data_ptr<double>() + slowest.numel(), v.seconds.begin());
  }
}

std::string TableRow(std::initializer_list<std::string> cells, std::initializer_list<int> widths) {
  std::string line = "|";
  auto w = widths.begin();
  for (const std::string& cell : cells)
    line += " " + cell + std::string(std::max(0, *w++ - static_cast<int>(cell.size())), ' ') + " |";
  return line;
}

std::string Fixed(double value, int digits) { return fmt::format("{:.{}f}", value, digits); }

// What both tables measure with: the rank's communicator and device, and the model's parameters
// with a gradient each.
struct BenchSetup {
  const Config& config;
  const MpiWorld& world;
  const AllReduceBenchOptions& options;
  c10::Device device;
  Communicator& comm;
  std::vector<at::Tensor>& params;
  int64_t elements;  // parameters in all
  bool lead;         // rank 0 prints
};

// Table 1: the gradients' bytes all-reduced several ways.
void AllReduceTable(const BenchSetup& b) {
  const double bytes = static_cast<double>(b.elements) * 4;
  at::Tensor flat = at::randn({b.elements}, b.params.front().options());
  std::vector<std::unique_ptr<GradientSync>> syncs;
  std::vector<Variant> variants;
  // The bound: one all-reduce of all the bytes, which every backend's AllReduceSum is (one
  // MPI_Allreduce on the calling thread; one ncclAllReduce on NCCL).
  auto raw_all_reduce = [&] { b.comm.AllReduceSum(flat); };
  variants.push_back({"one raw all-reduce of all bytes", 1, raw_all_reduce});
  variants.push_back({"one raw all-reduce, then divide by ranks", 1, [&] {
                        raw_all_reduce();
                        flat.div_(b.world.Size());
                      }});
  std::vector<double> bucket_sizes = {b.config.runtime.bucket_mb, 4.0, 1.0};
  bucket_sizes.erase(std::unique(bucket_sizes.begin(), bucket_sizes.end()), bucket_sizes.end());
  for (double mb : bucket_sizes) {
    syncs.push_back(std::make_unique<GradientSync>(b.params, b.comm, SyncOptions{mb, /*overlap=*/false}));
    GradientSync* sync = syncs.back().get();
    // Gradients live in the buckets (as in training, where backward writes them there).
    variants.push_back({"bucketed, " + Fixed(mb, mb < 1 ? 2 : 0) + " MiB buckets", sync->NumBuckets(),
                        [sync] { sync->AverageGradients(); }, [sync] { sync->PrepareBackward(false); }});
  }
  variants.push_back({"one all-reduce per parameter", static_cast<int64_t>(b.params.size()), [&] {
                        for (auto& p : b.params) b.comm.AllReduceAverage(p.mutable_grad());
                      }});
  TimeInterleaved(variants, b.options.iterations, b.comm, b.device);
  if (!b.lead) return;
  const double raw = Median(variants.front().seconds);
  std::string table = "\n" +
                      TableRow({"gradient all-reduce", "messages", "median ms", "GB/s", "vs raw"}, {44, 8, 9, 6, 6}) +
                      "\n|---|---:|---:|---:|---:|";
  for (const Variant& v : variants) {
    const double s = Median(v.seconds);
    table += "\n" + TableRow({v.name, std::to_string(v.messages), Fixed(s * 1e3, 3), Fixed(bytes / s / 1e9, 2),
                              Fixed(100 * raw / s, 0) + "%"},
                             {44, 8, 9, 6, 6});
  }
  spdlog::info("{}", table);
}

// Table 2: a training step of `model`, communication overlapped with backward or not.
void TrainingStepTable(const BenchSetup& b, VaeMlp& model) {
  const int64_t batch = b.config.train.batch_size;
  const auto float_options = at::TensorOptions().dtype(at::kFloat).device(b.device);
  at::Tensor x = at::randn({batch, b.options.length}, float_options);
  at::Tensor eps = at::randn({batch, b.config.model.latent}, float_options);
  torch::optim::Adam optimizer(b.params, torch::optim::AdamOptions(1e-5));
  GradientSync overlapped(b.params, b.comm, {b.config.runtime.bucket_mb, true});
  GradientSync after(b.params, b.comm, {b.config.runtime.bucket_mb, false});
  // A step with `sync` (or none): forward, backward, all-reduce, Adam. Untimed before it:
  // zero_grad, and pointing the gradients at this sync's buckets (the two syncs share them).
  auto prepare = [&](GradientSync* sync) {
    optimizer.zero_grad();
    if (sync) sync->PrepareBackward(true);
  };
  auto step = [&](GradientSync* sync) {
    VaeBatchLoss(VaePerSampleLoss(model->forward(x, eps), x), b.config.model.beta).backward();
    if (sync) sync->AverageGradients();
    optimizer.step();
  };
  std::vector<Variant> steps;
  steps.push_back({"no communication (compute bound)", 0, [&] { step(nullptr); }, [&] { prepare(nullptr); }});
  steps.push_back(
      {"all-reduce after backward (overlap off)", after.NumBuckets(), [&] { step(&after); }, [&] { prepare(&after); }});
  steps.push_back({"all-reduce during backward (overlap on)", overlapped.NumBuckets(), [&] { step(&overlapped); },
                   [&] { prepare(&overlapped); }});
  TimeInterleaved(steps, b.options.iterations, b.comm, b.device);
  if (!b.lead) return;
  const double compute = Median(steps.front().seconds);
  std::string table = "\n" +
                      TableRow({"training step, batch " + std::to_string(batch) + " per rank", "buckets", "median ms",
                                "samples/s", "comm exposed ms"},
                               {44, 7, 9, 9, 15}) +
                      "\n|---|---:|---:|---:|---:|";
  for (const Variant& v : steps) {
    const double s = Median(v.seconds);
    table += "\n" + TableRow({v.name, std::to_string(v.messages), Fixed(s * 1e3, 2),
                              Fixed(static_cast<double>(batch * b.world.Size()) / s, 0), Fixed((s - compute) * 1e3, 2)},
                             {44, 7, 9, 9, 15});
  }
  spdlog::info("{}", table);
}

}  // namespace

void RunAllReduceBench(const Config& config, const MpiWorld& world, const AllReduceBenchOptions& options) {
  const bool lead = world.Rank() == 0;
  const c10::Device device = PlaceThisRank(config, world).device;
  std::unique_ptr<Communicator> comm = MakeCommunicator(config.runtime, world, device);
  torch::manual_seed(static_cast<uint64_t>(config.train.seed));
  VaeMlp model(options.length, config.model.hidden, config.model.latent);
  model->to(device);
  std::vector<at::Tensor> params = model->parameters();
  int64_t elements = 0;
  for (auto& p : params) {
    p.mutable_grad() = at::randn_like(p);
    elements += p.numel();
  }
  if (lead) {
    spdlog::info(
        "bench allreduce: vae_mlp (length {}, hidden {}, latent {}): {} parameters, {:.2f} MiB of "
        "gradients; {} ranks, backend {}, {} timed runs each, medians of the slowest rank",
        options.length, fmt::join(config.model.hidden, ","), config.model.latent, elements,
        static_cast<double>(elements) * 4 / (1 << 20), world.Size(), comm->Name(), options.iterations);
    if (world.Size() == 1) spdlog::warn("one rank: every all-reduce is a no-op; run under mpirun -n 2 or more");
  }
  const BenchSetup setup{config, world, options, device, *comm, params, elements, lead};
  AllReduceTable(setup);
  TrainingStepTable(setup, model);
}

}  // namespace ct
