// `clustertrain bench step`: the compute-only bound of a training step. The model's forward,
// backward and Adam on batches of the training file already in memory (this rank's first
// rows, cycled): no data loading, no communication.
// Each rank runs it alone (placed and threaded as in training); rank 0 prints one JSON line
// with the median step of each rank.
#pragma once

#include <string>

#include "cluster/mpi_world.h"
#include "util/config.h"

namespace ct {

struct StepBenchOptions {
  int warmup = 20;  // untimed steps first
  int steps = 100;  // timed steps
  // Adam's update kernel: "auto" (training's: LibTorch's fused kernel on CUDA, one pass on the
  // CPU), "one-pass", "passes" (ATen's five elementwise passes) or "fused" (LibTorch's, where
  // it has one for the device; else the passes).
  std::string adam = "auto";
};

void RunStepBench(const Config& config, const MpiWorld& world, const StepBenchOptions& options);

}  // namespace ct
