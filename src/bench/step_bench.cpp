#include "bench/step_bench.h"

#include <torch/cuda.h>
#include <torch/utils.h>

#include <algorithm>
#include <array>
#include <chrono>

#include "cluster/gather_strings.h"
#include "cluster/placement.h"
#include "comm/make_communicator.h"
#include "data/shard_loader.h"
#include "model/forward.h"
#include "model/make_model.h"
#include "model/model_size.h"
#include "model/stale_gradients.h"
#include "train/cuda_graph_step.h"
#include "train/flat_params.h"
#include "train/optimizer.h"
#include "util/error.h"
#include "util/logging.h"
#include "util/median.h"
#include "util/seconds.h"

namespace ct {
namespace {

using Clock = std::chrono::steady_clock;

// One step's arithmetic per row, as usually estimated: 2 FLOP per multiply-add of the forward's
// matrix and convolution products, three times (forward; backward's input and weight
// gradients). A TorchScript model's layers are unknown: 6 FLOP per weight of each matrix.
double StepFlopsPerRow(const ModelConfig& model, const std::vector<FieldDims>& fields,
                       const std::vector<at::Tensor>& params) {
  const auto input = std::find_if(fields.begin(), fields.end(), [](const FieldDims& f) { return f.name == "input"; });
  const std::vector<int64_t>& dims = input != fields.end() ? input->dims : fields.front().dims;
  const double multiply_adds = EstimateModelSize(model, dims, dims).multiply_adds;
  if (multiply_adds > 0) return 6 * multiply_adds;
  double matrix_weights = 0;
  for (const at::Tensor& p : params) matrix_weights += p.dim() == 2 ? static_cast<double>(p.numel()) : 0;
  return 6 * matrix_weights;
}

// Up to 16 batches of this rank's rows drawn as training draws them (shuffled across its whole
// share), made before the clock starts and cycled. The data matters: random inputs drive the
// VAE's exp(logvar) into slower ranges, and so do the demo file's first rows (1.17x slower here).
std::vector<Batch> DrawBatches(ShardLoader& rows, const Config& config, int rank, const std::string& file) {
  const int64_t batch = config.train.batch_size;
  if (rows.Rows() < batch) throw ConfigError("bench step: fewer rows than train.batch_size in " + file);
  rows.Shuffle(static_cast<uint64_t>(config.train.seed), /*epoch=*/0, rank);
  std::vector<Batch> batches;
  for (int64_t i = 0; i < std::min<int64_t>(16, rows.Rows() / batch); ++i)
    batches.push_back(rows.ShuffledBatch(i, batch));
  return batches;
}

// One eager step's phases in seconds: forward (with the gradients' zeroing, or on the CPU their
// marking as stale, as training does: model/stale_gradients.h), backward (with the zeroing of
// what it did not write) and the update (CPU: each phase has finished when the next begins).
// A split update: the ranks meet first, untimed, as the gradients' all-reduce makes them meet
// in training; else its all-gather would also time how far apart their backwards ended.
std::array<double, 3> TimeEagerStep(Model& model, Optimizer& optimizer, StaleGradients* stale, const Batch& batch,
                                    const Config& config, const c10::Device& device, Communicator* node_comm) {
  auto start = Clock::now();
  if (stale) {
    stale->MarkAll();
  } else {
    optimizer.ZeroGrad();
  }
  const at::Tensor loss = ForwardAndLoss(model, batch, config.train.precision).loss;
  const double forward = SecondsSince(start);
  start = Clock::now();
  loss.backward();
  if (stale) stale->ZeroUnwritten();
  const double backward = SecondsSince(start);
  if (node_comm) node_comm->Barrier();
  start = Clock::now();
  optimizer.Step(config.train.lr);
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
  return {forward, backward, SecondsSince(start)};
}

// One JSON line, machine-readable for bench/run.sh: samples/s per process from the mean step over
// ranks; the phases' medians (forward, backward, optimizer) in seconds, this rank's.
void PrintStepResult(const Config& config, const Placement& placement, int ranks, double mean_step, double gflops,
                     std::array<double, 3> phases, bool cuda_graph, const std::string& optimizer) {
  const int64_t batch = config.train.batch_size;
  fmt::print(
      "{{\"compute_only_samples_per_s\": {:.1f}, \"step_ms\": {:.3f}, \"threads\": {}, \"ranks\": {}, "
      "\"batch\": {}, \"device\": \"{}\", \"model\": \"{}\", \"precision\": \"{}\", \"matrix_gflops\": {:.1f}, "
      "\"forward_ms\": {:.3f}, \"backward_ms\": {:.3f}, \"optimizer_ms\": {:.3f}, \"cuda_graph\": {}, "
      "\"optimizer\": \"{}\"}}\n",
      static_cast<double>(batch) / mean_step, 1e3 * mean_step, placement.binding.threads, ranks, batch,
      placement.device.str(), NameOf(config.model.kind), NameOf(config.train.precision), gflops, 1e3 * phases[0],
      1e3 * phases[1], 1e3 * phases[2], cuda_graph ? "true" : "false", optimizer);
}

}  // namespace

void RunStepBench(const Config& config, const MpiWorld& world, const StepBenchOptions& options) {
  const Placement placement = PlaceThisRank(config, world);
  const c10::Device device = placement.device;
  const int64_t batch = config.train.batch_size;
  const DatasetFiles files = OpenDatasetFiles("data.train", config.data.train, DataFields(config.data), world.Comm());
  ShardLoader rows = ShardLoader::Load(files, world.Comm(), device);
  const std::vector<Batch> batches = DrawBatches(rows, config, world.Rank(), files.Name());
  // The configured model and precision, as training runs them (model/forward.h).
  torch::manual_seed(static_cast<uint64_t>(config.train.seed));
  const std::unique_ptr<StepStream> step_stream = MakeStepStream(device);  // before any autograd node
  const std::unique_ptr<Model> model = MakeModel(config.model, rows.Fields());
  model->To(device);
  // Training's optimizer (train.optimizer) over flat parameter and gradient buffers, with the
  // update kernel training uses or the one --adam names.
  const std::vector<at::Tensor> params = model->Parameters();
  const bool fused = options.adam == "fused" || (options.adam == "auto" && device.is_cuda());
  const bool one_pass = options.adam == "auto" || options.adam == "one-pass";
  // As in training, a node's ranks split the one-pass update (runtime.shard_optimizer): its
  // time then includes the all-gather of the parameters.
  const std::unique_ptr<Communicator> node_comm = MakeOptimizerShardCommunicator(config.runtime, world, device);
  const std::unique_ptr<Optimizer> owned =
      MakeOptimizer(config.train, params, OwnGradients(params), fused, one_pass, node_comm.get());
  Optimizer& optimizer = *owned;
  // As in training: the CPU step replaces the gradients instead of zeroing them first.
  const std::unique_ptr<StaleGradients> stale = device.is_cpu() ? std::make_unique<StaleGradients>(params) : nullptr;
  // runtime.cuda_graph=on on a GPU: the step replayed from one graph, as training replays it.
  std::unique_ptr<GraphStep> graph;
  at::Tensor lr_on_device;
  if (device.is_cuda() && config.runtime.cuda_graph == AutoOnOff::kOn && optimizer.Capturable()) {
    graph = MakeCudaGraphStep(device, /*warmup_steps=*/3);
    lr_on_device = at::full({}, config.train.lr, at::TensorOptions().dtype(at::kFloat).device(device));
  }
  const auto graph_body = [&](const Batch& captured) {
    optimizer.ZeroGrad();
    const at::Tensor loss = ForwardAndLoss(*model, captured, config.train.precision).loss;
    loss.backward();
    optimizer.StepOnDevice(lr_on_device);
    return loss.detach();
  };
  // Where a step's time goes, per phase (on CUDA only the whole step is timed, as per-phase
  // syncs would change it).
  std::vector<double> seconds, forward_s, backward_s, optimizer_s;
  for (int i = 0; i < options.warmup + options.steps; ++i) {
    const Batch& b = batches[static_cast<size_t>(i) % batches.size()];
    std::array<double, 3> phases = {0, 0, 0};  // one graph: no phases
    double step = 0;
    if (graph) {
      const auto start = Clock::now();
      graph->Run(b, graph_body);
      optimizer.CountStep();
      torch::cuda::synchronize(device.index());
      step = SecondsSince(start);
    } else {
      phases = TimeEagerStep(*model, optimizer, stale.get(), b, config, device, node_comm.get());
      step = phases[0] + phases[1] + phases[2];
    }
    if (i >= options.warmup) {
      seconds.push_back(step);
      forward_s.push_back(phases[0]);
      backward_s.push_back(phases[1]);
      optimizer_s.push_back(phases[2]);
    }
  }
  const double step = Median(seconds);
  const double gflops = StepFlopsPerRow(config.model, rows.Fields(), params) * static_cast<double>(batch) / step / 1e9;
  const std::vector<std::string> steps = GatherStrings(world.Comm(), fmt::format("{:.6f}", step), 0);
  if (world.Rank() != 0) return;
  double mean_step = 0;
  for (const std::string& s : steps) mean_step += std::stod(s) / static_cast<double>(steps.size());
  PrintStepResult(config, placement, world.Size(), mean_step, gflops,
                  {Median(forward_s), Median(backward_s), Median(optimizer_s)}, graph != nullptr, optimizer.Describe());
}

}  // namespace ct
