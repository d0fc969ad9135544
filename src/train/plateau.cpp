#include "train/plateau.h"

#include <algorithm>
#include <limits>

namespace ct {

PlateauScheduler::PlateauScheduler(const PlateauConfig& config, double initial_lr)
    : config_(config),
      lr_(initial_lr),
      best_(config.mode == "min" ? std::numeric_limits<double>::infinity()
                                 : -std::numeric_limits<double>::infinity()) {}

bool PlateauScheduler::IsBetter(double metric) const {
  const bool rel = config_.threshold_mode == "rel";
  if (config_.mode == "min") {
    return rel ? metric < best_ * (1.0 - config_.threshold) : metric < best_ - config_.threshold;
  }
  return rel ? metric > best_ * (config_.threshold + 1.0) : metric > best_ + config_.threshold;
}

bool PlateauScheduler::Step(double metric) {
  if (IsBetter(metric)) {
    best_ = metric;
    bad_epochs_ = 0;
  } else {
    ++bad_epochs_;
  }
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    bad_epochs_ = 0;  // bad epochs in cooldown are ignored
  }
  if (bad_epochs_ <= config_.patience) return false;
  const double reduced = std::max(lr_ * config_.factor, config_.min_lr);
  const bool changed = lr_ - reduced > config_.eps;
  if (changed) lr_ = reduced;
  cooldown_counter_ = config_.cooldown;
  bad_epochs_ = 0;
  return changed;
}

}  // namespace ct
