#include "train/lr_policy.h"

#include <cmath>
#include <sstream>

namespace ct {

double LrPolicy::WarmupLr(int64_t global_step) const {
  if (!InWarmup(global_step)) return scaled_lr;
  return base_lr + (scaled_lr - base_lr) * static_cast<double>(global_step) / static_cast<double>(warmup_steps);
}

double LrPolicy::ScaledFor(int64_t other_global_batch) const {
  return ScaledLr(base_lr, base_batch, other_global_batch, scaling);
}

std::string LrPolicy::Derivation() const {
  std::ostringstream out;
  out << "global batch " << global_batch << " = " << batch_per_rank << " x " << world_size
      << (world_size == 1 ? " rank" : " ranks") << " x " << accumulation << "; lr " << base_lr << " -> " << scaled_lr
      << " by the " << NameOf(scaling) << " rule (base batch " << base_batch << ")";
  if (warmup_steps > 0) {
    out << "; warmup " << warmup_epochs << " epochs (" << warmup_steps << " steps) from " << base_lr;
  } else if (warmup_skipped) {
    out << "; no warmup (train.warmup_epochs=" << warmup_epochs << " ignored: the global batch is not above "
        << "train.base_batch, so the lr is not raised and has nothing to warm up to)";
  } else {
    out << "; no warmup";
  }
  return out.str();
}

double ScaledLr(double base_lr, int64_t base_batch, int64_t global_batch, LrScaling scaling) {
  const double ratio = static_cast<double>(global_batch) / static_cast<double>(base_batch);
  switch (scaling) {
    case LrScaling::kLinear:
      return base_lr * ratio;
    case LrScaling::kSqrt:
      return base_lr * std::sqrt(ratio);
    case LrScaling::kNone:
      break;
  }
  return base_lr;
}

LrPolicy MakeLrPolicy(double base_lr, int64_t base_batch, int64_t batch_per_rank, int world_size, int64_t accumulation,
                      LrScaling scaling, double warmup_epochs, int64_t steps_per_epoch) {
  LrPolicy policy;
  policy.base_lr = base_lr;
  policy.base_batch = base_batch;
  policy.scaling = scaling;
  policy.batch_per_rank = batch_per_rank;
  policy.world_size = world_size;
  policy.accumulation = accumulation;
  policy.warmup_epochs = warmup_epochs;
  policy.global_batch = batch_per_rank * world_size * accumulation;
  policy.scaled_lr = ScaledLr(base_lr, base_batch, policy.global_batch, scaling);
  policy.warmup_steps = static_cast<int64_t>(std::llround(warmup_epochs * static_cast<double>(steps_per_epoch)));
  // Warmup ramps up to a scaled lr above train.lr. A global batch at or below train.base_batch
  // scales the lr down (or not at all): a ramp would start above the target and "warm" downwards,
  // so the run starts at the scaled lr instead.
  if (policy.scaled_lr <= base_lr && policy.warmup_steps > 0) {
    policy.warmup_steps = 0;
    policy.warmup_skipped = true;
  }
  return policy;
}

}  // namespace ct
