#include "train/lr_schedule.h"

namespace ct {

LrSchedule::LrSchedule(const LrPolicy& policy, const PlateauConfig& plateau)
    : policy_(policy), plateau_(plateau, policy.scaled_lr), lr_(policy.WarmupLr(0)) {}

double LrSchedule::ForStep(int64_t global_step) {
  if (policy_.InWarmup(global_step)) lr_ = policy_.WarmupLr(global_step);
  return lr_;
}

bool LrSchedule::EndEpoch(int64_t global_step, double val_loss) {
  if (policy_.InWarmup(global_step)) return false;  // warmup owns the lr until it ends
  const bool reduced = plateau_.Step(val_loss);
  lr_ = plateau_.Lr();
  return reduced;
}

LrSchedule::State LrSchedule::Snapshot() const {
  return {lr_, plateau_.Snapshot(), policy_.global_batch, policy_.scaled_lr};
}

double LrSchedule::Restore(const State& state, int64_t global_step) {
  // Checkpoints from before scaled_lr was recorded: the same train.lr, by the same rule.
  const double old_scaled = state.scaled_lr > 0 ? state.scaled_lr : policy_.ScaledFor(state.global_batch);
  const double scale = old_scaled == policy_.scaled_lr ? 1.0 : policy_.scaled_lr / old_scaled;
  lr_ = policy_.InWarmup(global_step) ? policy_.WarmupLr(global_step) : state.lr * scale;
  PlateauScheduler::State plateau = state.plateau;
  plateau.lr *= scale;
  plateau_.Restore(plateau);
  return scale;
}

}  // namespace ct
