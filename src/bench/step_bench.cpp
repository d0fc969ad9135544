#include "bench/step_bench.h"

#include <torch/cuda.h>

#include <algorithm>
#include <chrono>

#include "cluster/gather_strings.h"
#include "cluster/placement.h"
#include "data/shard_loader.h"
#include "model/forward.h"
#include "model/make_model.h"
#include "train/flat_adam.h"
#include "util/error.h"
#include "util/logging.h"

namespace ct {

void RunStepBench(const Config& config, const MpiWorld& world, const StepBenchOptions& options) {
  const Placement placement = PlaceThisRank(config, world);
  const c10::Device device = placement.device;
  const int64_t batch = config.train.batch_size;
  // This rank's first rows of the training file, in memory, cycled as training cycles through
  // them (the data matters: random inputs drive the VAE's exp(logvar) into slower ranges).
  const DatasetFiles files =
      OpenDatasetFiles("data.train", config.data.train, config.data.input_key, config.data.target_key, world.Comm());
  const ShardLoader rows = ShardLoader::Load(files, world.Comm(), device);
  if (rows.Rows() < batch) throw ConfigError("bench step: fewer rows than train.batch_size in " + files.Name());
  const int64_t pool = std::min<int64_t>(16, rows.Rows() / batch);
  // The configured model and precision, as training runs them (model/forward.h).
  torch::manual_seed(static_cast<uint64_t>(config.train.seed));
  const std::unique_ptr<Model> model = MakeModel(config.model, rows.RowDims(), rows.TargetDims());
  model->To(device);
  // Training's optimizer: Adam over flat parameter and gradient buffers.
  const std::vector<at::Tensor> params = model->Parameters();
  FlatAdam optimizer(params, FlatAdam::OwnGradients(params), AdamSettings{});
  std::vector<double> seconds;
  for (int i = 0; i < options.warmup + options.steps; ++i) {
    const Batch b = rows.Rows((i % pool) * batch, batch);
    const auto start = std::chrono::steady_clock::now();
    optimizer.ZeroGrad();
    ForwardAndLoss(*model, b, config.model.beta, config.train.precision).total.backward();
    optimizer.Step(config.train.lr);
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
  fmt::print(
      "{{\"compute_only_samples_per_s\": {:.1f}, \"step_ms\": {:.3f}, \"threads\": {}, \"ranks\": {}, "
      "\"batch\": {}, \"device\": \"{}\", \"model\": \"{}\", \"precision\": \"{}\"}}\n",
      static_cast<double>(batch) / mean_step, 1e3 * mean_step, placement.binding.threads, world.Size(), batch,
      device.str(), NameOf(config.model.kind), NameOf(config.train.precision));
}

}  // namespace ct
