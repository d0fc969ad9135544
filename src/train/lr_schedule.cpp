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

LrSchedule::State LrSchedule::Snapshot() const { return {lr_, plateau_.Snapshot(), policy_.global_batch}; }

double LrSchedule::Restore(const State& state, int64_t global_step) {
  const double scale =
      state.global_batch == policy_.global_batch ? 1.0 : policy_.scaled_lr / policy_.ScaledFor(state.global_batch);
  lr_ = policy_.InWarmup(global_step) ? policy_.WarmupLr(global_step) : state.lr * scale;
  PlateauScheduler::State plateau = state.plateau;
  plateau.lr *= scale;
  plateau_.Restore(plateau);
  return scale;
}

}  // namespace ct
