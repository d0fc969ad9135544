// The one place that chooses the training batch source (data.sharding) and logs the choice.
#pragma once

#include <c10/core/Device.h>

#include <memory>

#include "cluster/mpi_world.h"
#include "data/dataset_files.h"
#include "data/train_batches.h"
#include "util/config.h"

namespace ct {

// Bytes a rank may hold its rows in: data.memory_budget, or half the node's RAM shared by its ranks.
int64_t MemoryBudgetBytes(const DataConfig& data, int local_ranks);

// Collective over the world: static or block batches of `batch` rows of data.train (`files`, as
// OpenDatasetFiles opened them), less data.val_fraction's tail. Throws DataError/ConfigError
// (the same on every rank) on bad input.
std::unique_ptr<TrainBatches> MakeTrainBatches(const DatasetFiles& files, const DataConfig& data, int64_t batch,
                                               uint64_t seed, const MpiWorld& world, const c10::Device& device);

}  // namespace ct
