// `clustertrain bench step`: the compute-only bound of a training step. The demo model's
// forward, backward and Adam on tensors already in memory: no data loading, no communication.
// Each rank runs it alone (placed and threaded as in training); rank 0 prints one JSON line
// with the median step of each rank.
#pragma once

#include "cluster/mpi_world.h"
#include "util/config.h"

namespace ct {

struct StepBenchOptions {
  int64_t length = 1024;  // waveform length: the demo data's
  int steps = 50;         // timed steps (after 5 untimed)
};

void RunStepBench(const Config& config, const MpiWorld& world, const StepBenchOptions& options);

}  // namespace ct
