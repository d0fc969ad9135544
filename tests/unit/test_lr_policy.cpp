#include <gtest/gtest.h>

#include <cmath>

#include "train/lr_policy.h"

namespace ct {
namespace {

TEST(LrPolicy, LinearRuleScalesWithTheGlobalBatch) {
  LrPolicy p = MakeLrPolicy(1e-3, 128, 128, 8, 1, "linear", 0, 100);
  EXPECT_EQ(p.global_batch, 1024);
  EXPECT_DOUBLE_EQ(p.scaled_lr, 8e-3);
  EXPECT_FALSE(p.InWarmup(0));
  EXPECT_DOUBLE_EQ(p.WarmupLr(0), 8e-3);
  EXPECT_DOUBLE_EQ(MakeLrPolicy(1e-3, 256, 64, 2, 1, "linear", 0, 10).scaled_lr, 5e-4);
  EXPECT_EQ(MakeLrPolicy(1e-3, 128, 32, 4, 3, "linear", 0, 10).global_batch, 384);
}

TEST(LrPolicy, SqrtAndNone) {
  EXPECT_DOUBLE_EQ(MakeLrPolicy(1e-3, 128, 128, 4, 1, "sqrt", 0, 10).scaled_lr, 2e-3);
  EXPECT_DOUBLE_EQ(MakeLrPolicy(1e-3, 128, 128, 4, 1, "none", 0, 10).scaled_lr, 1e-3);
}

TEST(LrPolicy, WarmupRisesLinearlyPerStepFromBaseToScaled) {
  LrPolicy p = MakeLrPolicy(1e-3, 128, 128, 8, 1, "linear", 2.5, 40);  // 100 warmup steps
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
  LrPolicy p = MakeLrPolicy(1e-3, 128, 128, 8, 1, "linear", 5, 10);
  std::string text = p.Derivation(128, 8, 1, 128, "linear", 5);
  EXPECT_NE(text.find("global batch 1024 = 128 x 8 ranks x 1"), std::string::npos) << text;
  EXPECT_NE(text.find("0.001 -> 0.008 by the linear rule"), std::string::npos) << text;
  EXPECT_NE(text.find("warmup 5 epochs"), std::string::npos) << text;
}

}  // namespace
}  // namespace ct
