#include "bench/step_bench.h"

#include <torch/cuda.h>
#include <torch/optim/adam.h>

#include <algorithm>
#include <chrono>

#include "cluster/gather_strings.h"
#include "cluster/placement.h"
#include "data/shard_loader.h"
#include "model/vae_loss.h"
#include "model/vae_mlp.h"
#include "util/error.h"
#include "util/logging.h"

namespace ct {

void RunStepBench(const Config& config, const MpiWorld& world, const StepBenchOptions& options) {
  const Placement placement = PlaceThisRank(config, world);
  const c10::Device device = placement.device;
  const auto float_options = at::TensorOptions().dtype(at::kFloat).device(device);
  const int64_t batch = config.train.batch_size;
  // This rank's first rows of the training file, in memory, cycled as training cycles through
  // them (the data matters: random inputs drive the VAE's exp(logvar) into slower ranges).
  const ShardLoader rows =
      ShardLoader::Load(config.data.train, config.data.input_key, config.data.target_key, world.Comm(), device);
  if (rows.Rows() < batch) throw ConfigError("bench step: fewer rows than train.batch_size in " + config.data.train);
  const int64_t pool = std::min<int64_t>(16, rows.Rows() / batch);
  torch::manual_seed(static_cast<uint64_t>(config.train.seed));
  VaeMlp model(rows.RowLength(), config.model.hidden, config.model.latent);
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(config.train.lr));
  at::Tensor eps = at::randn({pool, batch, config.model.latent}, float_options);
  std::vector<double> seconds;
  for (int i = 0; i < options.warmup + options.steps; ++i) {
    const Batch b = rows.Rows((i % pool) * batch, batch);
    const auto start = std::chrono::steady_clock::now();
    optimizer.zero_grad();
    VaeBatchLoss(VaePerSampleLoss(model->forward(b.input, eps[i % pool]), b.target), config.model.beta).backward();
    optimizer.step();
    if (device.is_cuda()) torch::cuda::synchronize(device.index());
    if (i >= options.warmup) {
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }
  std::nth_element(seconds.begin(), seconds.begin() + seconds.size() / 2, seconds.end());
  const double step = seconds[seconds.size() / 2];
  const std::vector<std::string> steps = GatherStrings(world.Comm(), fmt::format("{:.6f}", step), 0);
  if (world.Rank() != 0) return;
  double mean_step = 0;
  for (const std::string& s : steps) mean_step += std::stod(s) / static_cast<double>(steps.size());
  // Machine-readable for bench/run.sh; samples/s is per process.
  fmt::print("{{\"compute_only_samples_per_s\": {:.1f}, \"step_ms\": {:.3f}, \"threads\": {}, \"ranks\": {}, "
             "\"batch\": {}, \"device\": \"{}\"}}\n",
             static_cast<double>(batch) / mean_step, 1e3 * mean_step, placement.binding.threads, world.Size(), batch,
             device.str());
}

}  // namespace ct
