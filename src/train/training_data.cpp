#include "train/training_data.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "cluster/agree.h"
#include "cluster/gpu_pci.h"
#include "data/h5_file.h"
#include "data/make_train_batches.h"
#include "data/sharding.h"
#include "model/make_model.h"
#include "model/model_size.h"
#include "train/memory_check.h"
#include "util/error.h"
#include "util/logging.h"
#include "util/seconds.h"

namespace ct {
namespace {

using Clock = std::chrono::steady_clock;

// Before any row or weight is allocated: one step of the model on one batch, beside the
// validation rows, must fit the memory of the device the rank trains on (the smallest over
// ranks, so that every rank gives the same message), else one clear error instead of LibTorch's
// allocator failing on some rank.
void CheckStepFits(const Config& config, const MpiWorld& world, const c10::Device& device, const DatasetSchema& schema,
                   double val_bytes) {
  // The built-in models' fields; a TorchScript module's activations are counted as a row of its
  // widest field.
  const std::vector<FieldDims> fields = schema.Dims();
  if (config.model.kind != ModelKind::kTorchScript) {  // before sizing by the rows
    RunAgreed(world, [&] { CheckRowsFitModel(config.model, fields); });
  }
  const auto widest = std::max_element(fields.begin(), fields.end(), [](const FieldDims& a, const FieldDims& b) {
    return c10::multiply_integers(a.dims) < c10::multiply_integers(b.dims);
  });
  const auto dims_of = [&](const char* name) {
    const auto it = std::find_if(fields.begin(), fields.end(), [&](const FieldDims& f) { return f.name == name; });
    return it != fields.end() ? it->dims : widest->dims;
  };
  const ModelSize model = EstimateModelSize(config.model, dims_of("input"), dims_of("target"));
  const MemoryNeed need =
      EstimateMemoryNeed(model, config.train.batch_size, static_cast<double>(schema.RowBytes()), val_bytes);
  double available = HostBytesPerRank(world.LocalSize());
  const std::optional<int64_t> gpu_free = device.is_cuda() ? GpuFreeBytes(device.index()) : std::nullopt;
  if (gpu_free) available = static_cast<double>(*gpu_free);
  available = -world.MaxOverRanks(-available);
  const std::string shortfall =
      MemoryShortfall(need, available, gpu_free ? "GPU memory" : "memory", config.train.batch_size);
  if (!shortfall.empty()) throw ConfigError(shortfall, /*agreed=*/true);
}

// The files of `val` that are also files of `train` (the same file, whatever the spelling).
std::vector<std::string> SharedFiles(const DatasetFiles& train, const DatasetFiles& val) {
  std::vector<std::string> shared;
  for (const std::string& v : val.paths) {
    for (const std::string& t : train.paths) {
      std::error_code ec;
      if (std::filesystem::equivalent(v, t, ec)) {
        shared.push_back("'" + v + "'");
        break;
      }
    }
  }
  return shared;
}

}  // namespace

TrainingData LoadTrainingData(const Config& config, const MpiWorld& world, const c10::Device& device) {
  TrainingData result;
  const auto start = Clock::now();
  ParallelH5File::SetMpiIoHints(config.data.mpi_hints);
  if (world.Rank() == 0 && !config.data.mpi_hints.empty()) {
    std::string hints;
    for (const auto& [name, value] : config.data.mpi_hints) hints += (hints.empty() ? "" : ", ") + name + "=" + value;
    spdlog::info("data: MPI-IO hints {}", hints);
  }
  const DataConfig& data = config.data;
  DatasetFiles train_files, val_files;
  RunAgreed(world, [&] { train_files = OpenDatasetFiles("data.train", data.train, DataFields(data), world.Comm()); });
  RunAgreed(world, [&] {
    val_files =
        data.val_fraction > 0 ? train_files : OpenDatasetFiles("data.val", data.val, DataFields(data), world.Comm());
  });
  // The validation rows this rank will hold on its device beside its training rows (the largest
  // share, as ShardLoader splits them), for the training rows' memory budget.
  const int64_t val_rows = data.val_fraction > 0
                               ? PartOf(val_files.schema.Rows(), data.val_fraction, FilePart::kValidationTail).Size()
                               : val_files.schema.Rows();
  const int64_t val_bytes = (val_rows + world.Size() - 1) / world.Size() * val_files.schema.RowBytes();
  CheckStepFits(config, world, device, train_files.schema, static_cast<double>(val_bytes));
  RunAgreed(world, [&] {
    result.train = MakeTrainBatches(train_files, data, config.train.batch_size,
                                    static_cast<uint64_t>(config.train.seed), world, device, val_bytes);
  });
  RunAgreed(world, [&] {
    result.val.emplace(data.val_fraction > 0 ? ShardLoader::Load(val_files, world.Comm(), device, data.val_fraction,
                                                                 FilePart::kValidationTail)
                                             : ShardLoader::Load(val_files, world.Comm(), device));
  });
  // Shapes, not value counts: rows [2, 512] and [1024] hold as many values but fit no one model.
  const std::vector<FieldDims> train_fields = result.train->Fields(), val_fields = result.val->Fields();
  const bool same = std::equal(train_fields.begin(), train_fields.end(), val_fields.begin(), val_fields.end(),
                               [](const FieldDims& a, const FieldDims& b) { return a.dims == b.dims; });
  if (!same) {
    throw DataError("training rows have fields " + DescribeFields(train_fields) + " but validation rows " +
                        DescribeFields(val_fields) + ": " + train_files.Name() + " vs " + val_files.Name() +
                        "; give data.val rows of the training rows' shapes",
                    /*agreed=*/true);
  }
  const int64_t batch = config.train.batch_size;
  const int64_t accumulation = config.train.accumulation_steps;
  result.steps = result.train->BatchesPerEpoch() / accumulation;
  if (result.steps == 0) {
    // Every rank computes the same from the same totals: one message, from rank 0.
    throw ConfigError("train.batch_size=" + std::to_string(batch) +
                          " x train.accumulation_steps=" + std::to_string(accumulation) +
                          " is larger than a rank's share of the " + std::to_string(result.train->TotalRows()) +
                          " training rows over " + std::to_string(world.Size()) + " ranks (" +
                          result.train->Describe() + "); lower train.batch_size or use fewer ranks",
                      /*agreed=*/true);
  }
  if (world.Rank() == 0) {
    spdlog::info("data: {} train rows, {} val rows of fields {}; {} steps per epoch ({:.1f} s to load)",
                 result.train->TotalRows(), result.val->TotalRows(), DescribeFields(train_fields), result.steps,
                 SecondsSince(start));
    spdlog::info("data: {}", result.train->Describe());
    if (const auto shared = SharedFiles(train_files, val_files); data.val_fraction == 0 && !shared.empty()) {
      spdlog::warn(
          "data.val and data.train share {}: the validation loss, which steps the lr plateau, early stopping "
          "and best.pt, is measured on rows the model trains on; hold rows out with data.val_fraction or give "
          "data.val a file of its own",
          fmt::format("{}", fmt::join(shared, ", ")));
    }
  }
  return result;
}

}  // namespace ct
