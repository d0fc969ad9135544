// Learning rate for the global batch: the linear (or sqrt) scaling rule with gradual warmup
// (Goyal et al. 2017, "Accurate, Large Minibatch SGD"). Pure arithmetic, unit tested.
//
//   global batch = batch per rank x world size x accumulation steps
//   scaled lr    = base lr x (global / base batch)          linear
//                = base lr x sqrt(global / base batch)      sqrt
//                = base lr                                  none
//   warmup       : lr(step) = base + (scaled - base) x step / warmup_steps, for step < warmup_steps
//                  (only when scaled > base: a smaller global batch starts at its scaled lr)
#pragma once

#include <cstdint>
#include <string>

#include "util/choices.h"

namespace ct {

struct LrPolicy {
  // What it was derived from.
  double base_lr = 0;
  int64_t base_batch = 0;
  LrScaling scaling = LrScaling::kLinear;
  int64_t batch_per_rank = 0;
  int world_size = 1;
  int64_t accumulation = 1;
  double warmup_epochs = 0;
  // The result.
  double scaled_lr = 0;
  int64_t global_batch = 0;
  int64_t warmup_steps = 0;
  bool warmup_skipped = false;  // warmup asked for, but the scaled lr is not above base_lr

  bool InWarmup(int64_t global_step) const { return global_step < warmup_steps; }
  // The lr for optimizer step `global_step` (0-based) during warmup; scaled_lr after it.
  double WarmupLr(int64_t global_step) const;
  // base_lr scaled by the same rule for another global batch (a checkpoint of another world size).
  double ScaledFor(int64_t other_global_batch) const;
  // "global batch 256 = 128 x 2 ranks x 1; lr 0.001 -> 0.002 by the linear rule (base batch 128); ..."
  std::string Derivation() const;
};

// base_lr scaled from base_batch to global_batch by `scaling`.
double ScaledLr(double base_lr, int64_t base_batch, int64_t global_batch, LrScaling scaling);

LrPolicy MakeLrPolicy(double base_lr, int64_t base_batch, int64_t batch_per_rank, int world_size, int64_t accumulation,
                      LrScaling scaling, double warmup_epochs, int64_t steps_per_epoch);

}  // namespace ct
