#include "data/make_train_batches.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>

#include "cluster/gpu_pci.h"
#include "cluster/mpi_check.h"
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

MemoryBudget TrainingRowsBudget(const DataConfig& data, const MemoryFacts& facts) {
  MemoryBudget budget;
  if (data.memory_budget_gib > 0) {
    budget.bytes = static_cast<int64_t>(data.memory_budget_gib * (1 << 30));
    budget.why = "data.memory_budget " + Gib(static_cast<double>(budget.bytes));
  } else {
    budget.bytes = facts.host_ram_bytes / 2 / std::max(facts.local_ranks, 1);
    budget.why = "half the node's RAM over " + std::to_string(facts.local_ranks) + " rank(s), " +
                 Gib(static_cast<double>(budget.bytes));
    if (facts.gpu_free_bytes && *facts.gpu_free_bytes / 2 < budget.bytes) {
      budget.bytes = *facts.gpu_free_bytes / 2;
      budget.why = "half the GPU's free memory, " + Gib(static_cast<double>(budget.bytes));
    }
  }
  if (facts.val_bytes > 0) {
    budget.bytes = std::max<int64_t>(budget.bytes - facts.val_bytes, 0);
    budget.why += " less " + Gib(static_cast<double>(facts.val_bytes)) + " of validation rows";
  }
  return budget;
}

std::unique_ptr<TrainBatches> MakeTrainBatches(const DatasetFiles& files, const DataConfig& data, int64_t batch,
                                               uint64_t seed, const MpiWorld& world, const c10::Device& device,
                                               int64_t val_bytes) {
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
    schema.SetRows(head.end);
  }
  // The largest slice, so that every rank decides alike (replicated: every row).
  const int64_t slice_rows =
      data.sharding == Sharding::kReplicated ? schema.Rows() : (schema.Rows() + world.Size() - 1) / world.Size();
  const int64_t static_bytes = slice_rows * schema.RowBytes();
  MemoryFacts facts;
  facts.host_ram_bytes = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
  facts.local_ranks = world.LocalSize();
  if (device.is_cuda()) facts.gpu_free_bytes = GpuFreeBytes(device.index());
  facts.val_bytes = val_bytes;
  const MemoryBudget mine = TrainingRowsBudget(data, facts);
  const int64_t budget = world.MinOverRanks(mine.bytes);  // the smallest over ranks (GPUs differ in free memory)
  const std::string where = device.is_cuda() ? "GPU memory" : "memory";
  Sharding mode = data.sharding;
  if (mode == Sharding::kAuto) {
    mode = static_bytes <= budget ? Sharding::kStatic : Sharding::kBlocks;
    if (world.Rank() == 0) {
      spdlog::info(
          "data.sharding=auto: a rank's {} training rows need {} of {}, the budget is {} ({}; the "
          "smallest over ranks): {}",
          slice_rows, Gib(static_cast<double>(static_bytes)), where, Gib(static_cast<double>(budget)), mine.why,
          NameOf(mode));
    }
  } else if ((mode == Sharding::kStatic || mode == Sharding::kReplicated) && static_bytes > budget) {
    throw ConfigError("data.sharding=" + std::string(NameOf(mode)) + " keeps a rank's " + std::to_string(slice_rows) +
                      " rows of " + files.Name() + " in " + where + ": " + Gib(static_cast<double>(static_bytes)) +
                      ", over the budget of " + Gib(static_cast<double>(budget)) + " (" + mine.why +
                      "); set data.sharding=blocks to stream them, run more ranks, or raise data.memory_budget");
  }
  if (mode == Sharding::kReplicated) {
    // Every rank reads every row, on its own (the same reads, so the same errors on every rank).
    ShardLoader rows = ShardLoader::Load(files, MPI_COMM_SELF, device, data.val_fraction, FilePart::kTrainingHead);
    return std::make_unique<StaticBatches>(std::move(rows), batch, seed, world.Size(), world.Rank(),
                                           /*replicated=*/true);
  }
  if (mode == Sharding::kStatic) {
    ShardLoader rows = ShardLoader::Load(files, world.Comm(), device, data.val_fraction, FilePart::kTrainingHead);
    return std::make_unique<StaticBatches>(std::move(rows), batch, seed, world.Size(), world.Rank());
  }
  const std::string conversion = ConversionNote(schema, files.Name());
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
