// train.batch_size: auto -- the rule that stops the search and picks the size, on tables of
// measurements (the e2e test runs the search itself).
#include <gtest/gtest.h>

#include "train/batch_choice.h"

namespace ct {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Sizes from 16, doubling: samples/s and memory (MiB) of each.
std::vector<BatchMeasurement> Table(const std::vector<std::pair<double, double>>& rows) {
  std::vector<BatchMeasurement> out;
  int64_t batch = 16;
  for (const auto& [rate, mib] : rows) {
    out.push_back({batch, rate, mib * kMiB});
    batch *= 2;
  }
  return out;
}

BatchSearchLimits Limits(int64_t max_batch = 4096, double cap_mib = 1000, double min_gain = 0.05) {
  return {max_batch, cap_mib * kMiB, min_gain};
}

TEST(BatchChoice, GoesOnWhileEachDoublingGainsEnough) {
  EXPECT_TRUE(JudgeBatchSearch(Table({{1000, 10}}), Limits()).measure_next);
  EXPECT_TRUE(JudgeBatchSearch(Table({{1000, 10}, {1800, 20}}), Limits()).measure_next);
  EXPECT_TRUE(JudgeBatchSearch(Table({{1000, 10}, {1051, 20}}), Limits()).measure_next);  // +5.1%
}

TEST(BatchChoice, KeepsTheSmallerSizeWhenTheLargerGainsLessThanTheThreshold) {
  const BatchVerdict small_gain = JudgeBatchSearch(Table({{1000, 10}, {1800, 20}, {1880, 40}}), Limits());
  EXPECT_FALSE(small_gain.measure_next);
  EXPECT_EQ(small_gain.choice, 32);
  EXPECT_NE(small_gain.reason.find("batch 64 gains +4.4% samples/s over 32, less than train.autotune.min_gain 5%"),
            std::string::npos)
      << small_gain.reason;
  // A tie keeps the smaller size; so does a slower larger one.
  EXPECT_EQ(JudgeBatchSearch(Table({{1000, 10}, {1000, 20}}), Limits()).choice, 16);
  EXPECT_EQ(JudgeBatchSearch(Table({{1000, 10}, {900, 20}}), Limits()).choice, 16);
  // The threshold is the user's: at 0 any gain at all goes on, at 50% few do.
  EXPECT_TRUE(JudgeBatchSearch(Table({{1000, 10}, {1001, 20}}), Limits(4096, 1000, 0.0)).measure_next);
  EXPECT_EQ(JudgeBatchSearch(Table({{1000, 10}, {1400, 20}}), Limits(4096, 1000, 0.5)).choice, 16);
}

TEST(BatchChoice, StopsAtTheMemoryCapMeasuredOrForeseen) {
  // Measured above the cap: the size before it.
  const BatchVerdict over = JudgeBatchSearch(Table({{1000, 100}, {1800, 300}, {3000, 700}}), Limits(4096, 600));
  EXPECT_EQ(over.choice, 32);
  EXPECT_NE(over.reason.find("batch 64 needs 700.0 MiB beyond the cap of 600.0 MiB"), std::string::npos) << over.reason;
  // Foreseen: on the line through the last two sizes (100 MiB at 16 rows, 300 at 32: 12.5 MiB a
  // row), the next, 64 rows, would need 700 MiB.
  const BatchVerdict foreseen = JudgeBatchSearch(Table({{1000, 100}, {1800, 300}}), Limits(4096, 450));
  EXPECT_EQ(foreseen.choice, 32);
  EXPECT_NE(foreseen.reason.find("batch 64 would need about 700.0 MiB"), std::string::npos) << foreseen.reason;
  EXPECT_TRUE(JudgeBatchSearch(Table({{1000, 100}, {1800, 300}}), Limits(4096, 700)).measure_next);
  // One size measured: twice its memory.
  EXPECT_EQ(JudgeBatchSearch(Table({{1000, 300}}), Limits(4096, 500)).choice, 16);
  // Not even the first size fits: no choice.
  EXPECT_EQ(JudgeBatchSearch(Table({{1000, 600}}), Limits(4096, 500)).choice, 0);
}

TEST(BatchChoice, StopsAtTheLargestSizeAllowed) {
  const BatchVerdict at_max = JudgeBatchSearch(Table({{1000, 10}, {1800, 20}}), Limits(32));
  EXPECT_FALSE(at_max.measure_next);
  EXPECT_EQ(at_max.choice, 32);
  EXPECT_NE(at_max.reason.find("batch 64 would pass the largest allowed, 32"), std::string::npos);
  EXPECT_EQ(JudgeBatchSearch(Table({{1000, 10}, {1800, 20}}), Limits(63)).choice, 32);
  // The gain is judged before the limit: a size that does not pay is not kept for being last.
  EXPECT_EQ(JudgeBatchSearch(Table({{1000, 10}, {1010, 20}}), Limits(32)).choice, 16);
}

}  // namespace
}  // namespace ct
