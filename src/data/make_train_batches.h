// The one place that chooses the training batch source (data.sharding) and logs the choice.
#pragma once

#include <c10/core/Device.h>

#include <memory>
#include <optional>
#include <string>

#include "cluster/mpi_world.h"
#include "data/dataset_files.h"
#include "data/train_batches.h"
#include "util/config.h"

namespace ct {

// What limits the rows a rank may hold in memory (data.sharding=static keeps them all).
struct MemoryFacts {
  int64_t host_ram_bytes = 0;             // the node's physical memory
  int local_ranks = 1;                    // ranks sharing it
  std::optional<int64_t> gpu_free_bytes;  // CUDA: the rows live on this rank's GPU, this much is free
  int64_t val_bytes = 0;                  // this rank's validation rows, held beside them
};
struct MemoryBudget {
  int64_t bytes = 0;  // for this rank's training rows
  std::string why;    // "data.memory_budget 2.00 GiB less 0.10 GiB of validation rows"
};

// data.memory_budget, or the smaller of half the node's RAM over its ranks and (on CUDA) half
// the GPU's free memory; less the validation rows the rank also holds. Pure.
MemoryBudget TrainingRowsBudget(const DataConfig& data, const MemoryFacts& facts);

// Collective over the world: static or block batches of `batch` rows of data.train (`files`, as
// OpenDatasetFiles opened them), less data.val_fraction's tail. `val_bytes`: the validation rows
// this rank will hold on `device` too. The budget is the smallest over ranks, so that all decide
// alike. Throws DataError/ConfigError (the same on every rank) on bad input.
std::unique_ptr<TrainBatches> MakeTrainBatches(const DatasetFiles& files, const DataConfig& data, int64_t batch,
                                               uint64_t seed, const MpiWorld& world, const c10::Device& device,
                                               int64_t val_bytes);

}  // namespace ct
