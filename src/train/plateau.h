// ReduceLROnPlateau with PyTorch's exact semantics (torch.optim.lr_scheduler, one parameter
// group). Pure arithmetic; driven by the all-reduced validation loss, so every rank computes
// the same decision from the same number.
//
// Per Step(metric):
//   better = metric beats best (min/rel: m < best*(1-threshold); min/abs: m < best-threshold;
//            max/rel: m > best*(1+threshold); max/abs: m > best+threshold); a tie is not better
//   better ? best = metric, bad = 0 : bad += 1
//   in cooldown (counter > 0): counter -= 1, bad = 0
//   bad > patience: lr = max(lr*factor, min_lr) unless the change is <= eps;
//                   counter = cooldown; bad = 0
#pragma once

#include <cstdint>
#include <string>

#include "util/config.h"

namespace ct {

// The plateau scheduler's test: does `metric` beat `best` under mode/threshold/threshold_mode?
bool IsImprovement(const PlateauConfig& config, double metric, double best);

class PlateauScheduler {
 public:
  PlateauScheduler(const PlateauConfig& config, double initial_lr);

  // Feeds one epoch's metric; returns true when the lr was reduced.
  bool Step(double metric);

  double Lr() const { return lr_; }

  // Checkpointed: everything Step() changes.
  struct State {
    double lr = 0;
    double best = 0;
    int64_t bad_epochs = 0;
    int64_t cooldown_counter = 0;
  };
  State Snapshot() const { return {lr_, best_, bad_epochs_, cooldown_counter_}; }
  void Restore(const State& state) {
    lr_ = state.lr;
    best_ = state.best;
    bad_epochs_ = state.bad_epochs;
    cooldown_counter_ = state.cooldown_counter;
  }

 private:
  PlateauConfig config_;
  double lr_;
  double best_;
  int64_t bad_epochs_ = 0;
  int64_t cooldown_counter_ = 0;
};

// Early stopping: true once `patience` epochs in a row brought no improvement (same test as
// the plateau scheduler, not reset by lr reductions). patience 0 never stops.
class EarlyStopping {
 public:
  EarlyStopping(const PlateauConfig& config, int64_t patience);
  bool ShouldStop(double metric);

  // Checkpointed: the best metric and the epochs since it.
  struct State {
    double best = 0;
    int64_t bad_epochs = 0;
  };
  State Snapshot() const { return {best_, bad_epochs_}; }
  void Restore(const State& state) {
    best_ = state.best;
    bad_epochs_ = state.bad_epochs;
  }

 private:
  PlateauConfig config_;
  int64_t patience_;
  double best_;
  int64_t bad_epochs_ = 0;
};

// The best epoch so far (the one best.pt holds): an epoch is the new best when its metric beats
// the best one under the plateau scheduler's test, so "improved" means the same to both.
class BestEpoch {
 public:
  explicit BestEpoch(const PlateauConfig& config);
  // Feeds epoch `epoch`'s metric; true when it is the new best.
  bool Observe(int64_t epoch, double metric);
  int64_t Epoch() const { return epoch_; }  // 0 before any epoch improved

  // Checkpointed.
  struct State {
    double best = 0;
    int64_t epoch = 0;
  };
  State Snapshot() const { return {best_, epoch_}; }
  void Restore(const State& state) {
    best_ = state.best;
    epoch_ = state.epoch;
  }

 private:
  PlateauConfig config_;
  double best_;
  int64_t epoch_ = 0;
};

}  // namespace ct
