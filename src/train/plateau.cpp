#include "train/plateau.h"

#include <algorithm>
#include <limits>

namespace ct {

namespace {
double WorstValue(const PlateauConfig& config) {
  return config.mode == PlateauMode::kMin ? std::numeric_limits<double>::infinity()
                                          : -std::numeric_limits<double>::infinity();
}
}  // namespace

bool IsImprovement(const PlateauConfig& config, double metric, double best) {
  const bool rel = config.threshold_mode == ThresholdMode::kRel;
  if (config.mode == PlateauMode::kMin) {
    return rel ? metric < best * (1.0 - config.threshold) : metric < best - config.threshold;
  }
  return rel ? metric > best * (config.threshold + 1.0) : metric > best + config.threshold;
}

PlateauScheduler::PlateauScheduler(const PlateauConfig& config, double initial_lr)
    : config_(config), lr_(initial_lr), best_(WorstValue(config)) {}

bool PlateauScheduler::Step(double metric) {
  if (IsImprovement(config_, metric, best_)) {
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

EarlyStopping::EarlyStopping(const PlateauConfig& config, int64_t patience)
    : config_(config), patience_(patience), best_(WorstValue(config)) {}

bool EarlyStopping::ShouldStop(double metric) {
  if (IsImprovement(config_, metric, best_)) {
    best_ = metric;
    bad_epochs_ = 0;
  } else {
    ++bad_epochs_;
  }
  return patience_ > 0 && bad_epochs_ >= patience_;
}

BestEpoch::BestEpoch(const PlateauConfig& config) : config_(config), best_(WorstValue(config)) {}

bool BestEpoch::Observe(int64_t epoch, double metric) {
  if (!IsImprovement(config_, metric, best_)) return false;
  best_ = metric;
  epoch_ = epoch;
  return true;
}

}  // namespace ct
