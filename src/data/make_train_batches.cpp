#include "data/make_train_batches.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>

#include "data/block_stream.h"
#include "data/dataset_files.h"
#include "data/shard_loader.h"
#include "util/error.h"

namespace ct {
namespace {

std::string Gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f GiB", bytes / (1 << 30));
  return text;
}

}  // namespace

int64_t MemoryBudgetBytes(const DataConfig& data, int local_ranks) {
  if (data.memory_budget_gib > 0) return static_cast<int64_t>(data.memory_budget_gib * (1 << 30));
  const double ram = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  return static_cast<int64_t>(ram / 2 / std::max(local_ranks, 1));
}

std::unique_ptr<TrainBatches> MakeTrainBatches(const DatasetFiles& files, const DataConfig& data, int64_t batch,
                                               uint64_t seed, const MpiWorld& world, const c10::Device& device) {
  DatasetSchema schema = files.schema;
  if (data.val_fraction > 0) {
    // Training sees only the rows before the validation tail (data/sharding.h).
    const RowRange head = PartOf(schema.Rows(), data.val_fraction, FilePart::kTrainingHead);
    if (head.Size() < 1) {
      throw DataError(files.Name() + " has " + std::to_string(schema.Rows()) +
                      " rows: too few to set aside data.val_fraction=" + std::to_string(data.val_fraction) +
                      " for validation and train on the rest; lower it or give data.val");
    }
    if (world.Rank() == 0) {
      const std::string training = files.paths.size() == 1 ? "rows 0-" + std::to_string(head.end - 1)
                                                           : "the " + std::to_string(head.end) + " rows before them";
      spdlog::info("data: data.val_fraction={}: {} are the validation set, never trained on; training uses {}",
                   data.val_fraction, files.Describe({head.end, schema.Rows()}), training);
    }
    schema.input.dims[0] = schema.target.dims[0] = head.end;
  }
  // The largest slice, so that every rank decides alike.
  const int64_t slice_rows = (schema.Rows() + world.Size() - 1) / world.Size();
  const int64_t static_bytes = slice_rows * schema.RowBytes();
  const int64_t budget = MemoryBudgetBytes(data, world.LocalSize());
  Sharding mode = data.sharding;
  if (mode == Sharding::kAuto) {
    mode = static_bytes <= budget ? Sharding::kStatic : Sharding::kBlocks;
    if (world.Rank() == 0) {
      spdlog::info("data.sharding=auto: a rank's {} training rows need {}, data.memory_budget is {}: {}", slice_rows,
                   Gib(static_cast<double>(static_bytes)), Gib(static_cast<double>(budget)), NameOf(mode));
    }
  } else if (mode == Sharding::kStatic && static_bytes > budget) {
    throw ConfigError("data.sharding=static keeps a rank's " + std::to_string(slice_rows) + " rows of " + files.Name() +
                      " in memory: " + Gib(static_cast<double>(static_bytes)) + ", over data.memory_budget (" +
                      Gib(static_cast<double>(budget)) +
                      "); set data.sharding=blocks to stream them, run more ranks, or raise data.memory_budget");
  }
  if (mode == Sharding::kStatic) {
    ShardLoader rows = ShardLoader::Load(files, world.Comm(), device, data.val_fraction, FilePart::kTrainingHead);
    return std::make_unique<StaticBatches>(std::move(rows), batch, seed, world.Size(), world.Rank());
  }
  const std::string conversion = ConversionNote(schema, files.Name(), data.input_key, data.target_key);
  if (world.Rank() == 0 && !conversion.empty()) spdlog::info("data: {}", conversion);
  BlockStreamOptions options;
  options.files = files;
  options.schema = schema;
  options.block_rows =
      data.block_rows > 0 ? std::min(data.block_rows, schema.Rows()) : AutoBlockRows(schema, world.Size());
  options.window_blocks = data.shuffle_window;
  options.prefetch = data.prefetch;
  options.batch = batch;
  options.seed = seed;
  options.world_size = world.Size();
  options.rank = world.Rank();
  options.device = device;
  const BlockPlan plan{schema.Rows(), options.block_rows};
  if (plan.NumBlocks() < world.Size()) {
    throw ConfigError(files.Name() + " has " + std::to_string(plan.NumBlocks()) + " blocks of " +
                      std::to_string(options.block_rows) + " rows for " + std::to_string(world.Size()) +
                      " ranks: every rank needs one; lower data.block_rows, or use data.sharding=static");
  }
  return std::make_unique<BlockStream>(options);
}

}  // namespace ct
