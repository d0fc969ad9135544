// The budget for a rank's training rows (data/make_train_batches.h): host RAM, GPU memory on
// CUDA, and the validation rows held beside them.
#include <gtest/gtest.h>

#include "data/make_train_batches.h"

namespace ct {
namespace {

constexpr int64_t kGib = int64_t{1} << 30;

TEST(MemoryBudget, CpuIsHalfTheRamOverTheNodesRanksLessValidationRows) {
  DataConfig data;
  MemoryFacts facts;
  facts.host_ram_bytes = 64 * kGib;
  facts.local_ranks = 4;
  facts.val_bytes = kGib;
  const MemoryBudget budget = TrainingRowsBudget(data, facts);
  EXPECT_EQ(budget.bytes, 8 * kGib - kGib);
  EXPECT_NE(budget.why.find("half the node's RAM over 4 rank(s)"), std::string::npos) << budget.why;
  EXPECT_NE(budget.why.find("less 1.00 GiB of validation rows"), std::string::npos) << budget.why;
}

TEST(MemoryBudget, CudaCountsTheGpusFreeMemoryWhenItIsTheSmaller) {
  DataConfig data;
  MemoryFacts facts;
  facts.host_ram_bytes = 512 * kGib;  // a GPU node: 4 ranks, 64 GiB of RAM each, 40 GiB GPUs
  facts.local_ranks = 4;
  facts.gpu_free_bytes = 38 * kGib;
  facts.val_bytes = 2 * kGib;
  const MemoryBudget budget = TrainingRowsBudget(data, facts);
  EXPECT_EQ(budget.bytes, 19 * kGib - 2 * kGib);
  EXPECT_NE(budget.why.find("half the GPU's free memory"), std::string::npos) << budget.why;

  facts.gpu_free_bytes = 200 * kGib;  // RAM the smaller: it decides
  EXPECT_EQ(TrainingRowsBudget(data, facts).bytes, 64 * kGib - 2 * kGib);
}

TEST(MemoryBudget, AnExplicitBudgetHoldsTheValidationRowsToo) {
  DataConfig data;
  data.memory_budget_gib = 3;
  MemoryFacts facts;
  facts.host_ram_bytes = 512 * kGib;
  facts.gpu_free_bytes = 1 * kGib;  // the user's number wins over the probe
  facts.val_bytes = 4 * kGib;       // more than the budget: nothing left for training rows
  const MemoryBudget budget = TrainingRowsBudget(data, facts);
  EXPECT_EQ(budget.bytes, 0);
  EXPECT_NE(budget.why.find("data.memory_budget 3.00 GiB less 4.00 GiB"), std::string::npos) << budget.why;
}

}  // namespace
}  // namespace ct
