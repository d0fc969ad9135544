// train.batch_size: auto -- before epoch 1, a short timed search over per-rank batch sizes on the
// run's own model, data and gradient all-reduce (train/batch_choice.h decides when it stops).
//
// Each size runs 2 untimed and train.autotune.steps timed steps of real batches: forward,
// backward, the bucketed all-reduce; no optimizer step. The weights are therefore untouched, the
// gradients are zeroed after each step and the model's buffers (a BatchNorm's statistics) are
// put back afterwards, so that the run goes on exactly as one configured with the chosen size.
// Every rank measures; the slowest rank's time and the largest rank's memory decide, so all
// ranks choose alike. Memory is the step's peak beyond what the rank held before: LibTorch's
// caching allocator on CUDA, the resident set (VmHWM) on the CPU.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>

#include "cluster/mpi_world.h"
#include "comm/gradient_sync.h"
#include "data/train_batches.h"
#include "model/model.h"
#include "util/config.h"

namespace ct {

struct AutotuneParts {
  Model& model;
  GradientSync& sync;
  TrainBatches& batches;  // serving batches of train.autotune.min rows (the sizes tried are multiples)
  const MpiWorld& world;
  c10::Device device;
  Precision precision;
  int64_t accumulation = 1;  // micro-batches a step: a size must leave each rank a step an epoch
};

// Collective. The chosen per-rank batch; rank 0 logs the table measured and why the search
// stopped. A ConfigError (agreed) when not even train.autotune.min fits.
int64_t AutotuneBatchSize(const AutotuneConfig& tune, const AutotuneParts& parts);

}  // namespace ct
