// Before anything large is allocated: does one step of this model on one batch fit the memory a
// rank has? A lower bound (the batch, the parameters with their gradients and Adam's two
// moments, the forward's layer outputs, the validation rows the rank keeps), so that a run is
// refused only when it certainly cannot fit; the rows held for training are budgeted apart
// (data.sharding, data/make_train_batches.h).
#pragma once

#include <cstdint>
#include <string>

#include "model/model_size.h"

namespace ct {

struct MemoryNeed {
  double batch_bytes = 0;       // one batch of input and target rows, as float32
  double row_bytes = 0;         // one row of them
  double model_bytes = 0;       // parameters, gradients, exp_avg, exp_avg_sq
  double activation_bytes = 0;  // the forward's layer outputs for one batch
  double held_bytes = 0;        // validation rows this rank keeps
  double Total() const { return batch_bytes + model_bytes + activation_bytes + held_bytes; }
};

MemoryNeed EstimateMemoryNeed(const ModelSize& model, int64_t batch, double row_bytes, double held_bytes);

// "" when `need` fits in `available` bytes (this rank's share of `where`: "memory" or "GPU
// memory"); else the message, with the numbers and the keys to change. Pure.
std::string MemoryShortfall(const MemoryNeed& need, double available, const std::string& where, int64_t batch);

// This rank's share of the node's memory: MemAvailable (/proc/meminfo; physical memory where it
// cannot be read) over the node's ranks.
double HostBytesPerRank(int local_ranks);

}  // namespace ct
