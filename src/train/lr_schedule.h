// The lr in use at every optimizer step: the lr policy's warmup ramp while it lasts, then
// ReduceLROnPlateau, which starts from the scaled lr and counts only epochs after warmup.
// Pure arithmetic over the all-reduced validation loss: every rank makes the same decisions.
#pragma once

#include <cstdint>

#include "train/lr_policy.h"
#include "train/plateau.h"

namespace ct {

class LrSchedule {
 public:
  LrSchedule(const LrPolicy& policy, const PlateauConfig& plateau);

  // The lr for optimizer step `global_step` (0-based): moves along the warmup ramp.
  double ForStep(int64_t global_step);
  // After an epoch whose last step was `global_step` - 1, with its validation loss. Returns
  // true when the plateau scheduler reduced the lr; nothing happens during warmup.
  bool EndEpoch(int64_t global_step, double val_loss);

  bool InWarmup(int64_t global_step) const { return policy_.InWarmup(global_step); }
  double Lr() const { return lr_; }
  const LrPolicy& Policy() const { return policy_; }

  // Checkpointed: the lr in use, the plateau's counters, and the global batch and scaled lr
  // they were derived for (scaled_lr 0: not recorded, from before it was).
  struct State {
    double lr = 0;
    PlateauScheduler::State plateau;
    int64_t global_batch = 0;
    double scaled_lr = 0;
  };
  State Snapshot() const;
  // Continues after optimizer step `global_step` - 1. A state saved for another scaled lr
  // (another world size, or an allowed change of train.lr, base_batch or lr_scaling) has its lrs
  // multiplied by new scaled lr / old: plateau reductions so far are kept. Returns that factor.
  double Restore(const State& state, int64_t global_step);

 private:
  LrPolicy policy_;
  PlateauScheduler plateau_;
  double lr_;
};

}  // namespace ct
