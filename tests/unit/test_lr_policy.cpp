#include <gtest/gtest.h>

#include <cmath>

#include "train/lr_policy.h"
#include "train/lr_schedule.h"

namespace ct {
namespace {

TEST(LrPolicy, LinearRuleScalesWithTheGlobalBatch) {
  LrPolicy p = MakeLrPolicy(1e-3, 128, 128, 8, 1, LrScaling::kLinear, 0, 100);
  EXPECT_EQ(p.global_batch, 1024);
  EXPECT_DOUBLE_EQ(p.scaled_lr, 8e-3);
  EXPECT_FALSE(p.InWarmup(0));
  EXPECT_DOUBLE_EQ(p.WarmupLr(0), 8e-3);
  EXPECT_DOUBLE_EQ(MakeLrPolicy(1e-3, 256, 64, 2, 1, LrScaling::kLinear, 0, 10).scaled_lr, 5e-4);
  EXPECT_EQ(MakeLrPolicy(1e-3, 128, 32, 4, 3, LrScaling::kLinear, 0, 10).global_batch, 384);
}

TEST(LrPolicy, SqrtAndNone) {
  EXPECT_DOUBLE_EQ(MakeLrPolicy(1e-3, 128, 128, 4, 1, LrScaling::kSqrt, 0, 10).scaled_lr, 2e-3);
  EXPECT_DOUBLE_EQ(MakeLrPolicy(1e-3, 128, 128, 4, 1, LrScaling::kNone, 0, 10).scaled_lr, 1e-3);
}

TEST(LrPolicy, WarmupRisesLinearlyPerStepFromBaseToScaled) {
  LrPolicy p = MakeLrPolicy(1e-3, 128, 128, 8, 1, LrScaling::kLinear, 2.5, 40);  // 100 warmup steps
  EXPECT_EQ(p.warmup_steps, 100);
  EXPECT_DOUBLE_EQ(p.WarmupLr(0), 1e-3);
  EXPECT_NEAR(p.WarmupLr(50), 4.5e-3, 1e-15);
  EXPECT_NEAR(p.WarmupLr(99), 1e-3 + 7e-3 * 0.99, 1e-15);
  EXPECT_TRUE(p.InWarmup(99));
  EXPECT_FALSE(p.InWarmup(100));
  EXPECT_DOUBLE_EQ(p.WarmupLr(100), 8e-3);
  for (int64_t s = 1; s < 100; ++s) EXPECT_GT(p.WarmupLr(s), p.WarmupLr(s - 1));
}

TEST(LrPolicy, DerivationStatesTheArithmetic) {
  LrPolicy p = MakeLrPolicy(1e-3, 128, 128, 8, 1, LrScaling::kLinear, 5, 10);
  std::string text = p.Derivation();
  EXPECT_NE(text.find("global batch 1024 = 128 x 8 ranks x 1"), std::string::npos) << text;
  EXPECT_NE(text.find("0.001 -> 0.008 by the linear rule"), std::string::npos) << text;
  EXPECT_NE(text.find("warmup 5 epochs"), std::string::npos) << text;
}

// Warmup owns the lr until it ends, then the plateau scheduler, from the scaled lr.
TEST(LrSchedule, WarmupThenPlateau) {
  PlateauConfig plateau;
  plateau.patience = 0;
  LrSchedule lr(MakeLrPolicy(1e-3, 128, 128, 8, 1, LrScaling::kLinear, 1, 10), plateau);  // 10 warmup steps
  for (int64_t step = 0; step < 10; ++step) {
    EXPECT_DOUBLE_EQ(lr.ForStep(step), 1e-3 + 7e-3 * static_cast<double>(step) / 10.0);
    if (step == 4) {
      EXPECT_FALSE(lr.EndEpoch(5, 1.0));  // in warmup: the plateau does not count it
    }
  }
  EXPECT_FALSE(lr.EndEpoch(10, 1.0));  // warmup over; the plateau's first epoch improves on +inf
  EXPECT_DOUBLE_EQ(lr.ForStep(10), 8e-3);
  EXPECT_TRUE(lr.EndEpoch(20, 1.0));  // no improvement, patience 0
  EXPECT_DOUBLE_EQ(lr.Lr(), 8e-3 * 0.2);
  EXPECT_DOUBLE_EQ(lr.ForStep(21), 8e-3 * 0.2);  // after warmup a step does not move it
}

// A snapshot restored into a run of another world size follows the new global batch.
TEST(LrSchedule, RestoreRescalesForAnotherGlobalBatch) {
  PlateauConfig plateau;
  plateau.patience = 0;
  LrSchedule eight(MakeLrPolicy(1e-3, 128, 128, 8, 1, LrScaling::kLinear, 0, 10), plateau);
  eight.EndEpoch(10, 1.0);
  eight.EndEpoch(20, 1.0);  // reduced: 8e-3 -> 1.6e-3
  LrSchedule same(MakeLrPolicy(1e-3, 128, 128, 8, 1, LrScaling::kLinear, 0, 10), plateau);
  EXPECT_DOUBLE_EQ(same.Restore(eight.Snapshot(), 20), 1.0);
  EXPECT_EQ(same.Lr(), eight.Lr());
  LrSchedule two(MakeLrPolicy(1e-3, 128, 128, 2, 1, LrScaling::kLinear, 0, 40), plateau);
  EXPECT_DOUBLE_EQ(two.Restore(eight.Snapshot(), 20), 0.25);
  EXPECT_DOUBLE_EQ(two.Lr(), 1.6e-3 * 0.25);
  EXPECT_TRUE(two.EndEpoch(60, 1.0));  // the restored best (1.0) is not beaten
  EXPECT_DOUBLE_EQ(two.Lr(), 1.6e-3 * 0.25 * 0.2);
}

// --allow-config-changes with another train.lr: the restored lrs follow it, reductions kept.
TEST(LrSchedule, RestoreFollowsAChangedBaseLr) {
  PlateauConfig plateau;
  plateau.patience = 0;
  LrSchedule before(MakeLrPolicy(1e-3, 128, 128, 8, 1, LrScaling::kLinear, 0, 10), plateau);
  before.EndEpoch(10, 1.0);
  before.EndEpoch(20, 1.0);  // reduced: 8e-3 -> 1.6e-3
  LrSchedule after(MakeLrPolicy(5e-4, 128, 128, 8, 1, LrScaling::kLinear, 0, 10), plateau);
  EXPECT_DOUBLE_EQ(after.Restore(before.Snapshot(), 20), 0.5);
  EXPECT_DOUBLE_EQ(after.Lr(), 1.6e-3 * 0.5);
}

// A global batch below base_batch scales the lr down: no warmup "downwards" from train.lr.
TEST(LrPolicy, NoWarmupWhenTheScaledLrIsNotAboveTheBase) {
  const LrPolicy small = MakeLrPolicy(1e-3, 256, 32, 2, 1, LrScaling::kLinear, 2, 10);  // global 64 < 256
  EXPECT_DOUBLE_EQ(small.scaled_lr, 2.5e-4);
  EXPECT_EQ(small.warmup_steps, 0);
  EXPECT_DOUBLE_EQ(small.WarmupLr(0), 2.5e-4);  // starts at the scaled lr, not at 1e-3
  EXPECT_NE(small.Derivation().find("train.warmup_epochs=2 ignored"), std::string::npos) << small.Derivation();
  const LrPolicy large = MakeLrPolicy(1e-3, 32, 32, 2, 1, LrScaling::kLinear, 2, 10);  // global 64 > 32
  EXPECT_EQ(large.warmup_steps, 20);
  EXPECT_DOUBLE_EQ(large.WarmupLr(0), 1e-3);
}

}  // namespace
}  // namespace ct
