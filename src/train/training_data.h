// The training run's rows (the trainer's phase after placement): every rank's training batches
// (data.sharding: in memory, streamed in blocks, or replicated) and its validation rows, after
// the start-up checks that need the data's shapes: one step must fit the device's memory, the
// validation rows must have the training rows' fields, and the batch must fit a rank's share.
#pragma once

#include <c10/core/Device.h>

#include <memory>
#include <optional>

#include "cluster/mpi_world.h"
#include "data/shard_loader.h"
#include "data/train_batches.h"
#include "util/config.h"

namespace ct {

struct TrainingData {
  std::unique_ptr<TrainBatches> train;
  std::optional<ShardLoader> val;
  int64_t steps = 0;  // optimizer steps per epoch
};

// Collective. Each rank reads its own rows. A bad file fails every rank alike (or, for NaN rows,
// some ranks after all collective reads): agreed per file, so that rank 0 prints one message and
// no rank waits in a collective.
TrainingData LoadTrainingData(const Config& config, const MpiWorld& world, const c10::Device& device);

}  // namespace ct
