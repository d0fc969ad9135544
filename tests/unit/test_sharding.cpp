#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "data/sharding.h"

namespace ct {
namespace {

TEST(Sharding, SlicesAreDisjointContiguousAndCoverAllRows) {
  for (int world : {1, 2, 3, 4, 7}) {
    for (int64_t rows : {0, 1, 6, 7, 100, 1001, 16384, 99991}) {
      int64_t next = 0;
      for (int r = 0; r < world; ++r) {
        RowRange s = RankSlice(rows, world, r);
        EXPECT_EQ(s.begin, next) << "world " << world << " rows " << rows << " rank " << r;
        EXPECT_GE(s.Size(), rows / world);
        EXPECT_LE(s.Size(), rows / world + 1);
        next = s.end;
      }
      EXPECT_EQ(next, rows);
    }
  }
}

TEST(Sharding, EveryRankRunsTheSameNumberOfFullBatches) {
  for (int world : {1, 2, 3, 4, 7}) {
    for (int64_t rows : {7, 100, 1001, 16384, 99991}) {
      for (int64_t batch : {1, 3, 32, 128}) {
        const int64_t steps = StepsPerEpoch(rows, world, batch);
        for (int r = 0; r < world; ++r) {
          EXPECT_LE(steps * batch, RankSlice(rows, world, r).Size()) << world << " " << rows << " " << batch;
        }
        // And no more steps would fit on the smallest rank.
        EXPECT_GT((steps + 1) * batch, rows / world);
      }
    }
  }
}

TEST(Sharding, EpochOrdersAreDisjointAcrossRanksAndChangeEachEpoch) {
  for (int world : {1, 2, 3, 4, 7}) {
    const int64_t rows = 1001;
    std::vector<int64_t> epoch0_rank0;
    for (int64_t epoch = 0; epoch < 3; ++epoch) {
      std::set<int64_t> seen;
      for (int r = 0; r < world; ++r) {
        RowRange slice = RankSlice(rows, world, r);
        std::vector<int64_t> order = EpochPermutation(slice.Size(), 42, epoch, r);
        std::vector<int64_t> sorted = order;
        std::sort(sorted.begin(), sorted.end());
        for (int64_t i = 0; i < slice.Size(); ++i) ASSERT_EQ(sorted[i], i);  // a permutation
        for (int64_t local : order) EXPECT_TRUE(seen.insert(slice.begin + local).second);
        if (r == 0 && epoch == 0) epoch0_rank0 = order;
        if (r == 0 && epoch > 0) {
          EXPECT_NE(order, epoch0_rank0);
        }
      }
      EXPECT_EQ(static_cast<int64_t>(seen.size()), rows);  // union = every row
    }
  }
}

TEST(Sharding, OrderDependsOnSeedAndIsReproducible) {
  EXPECT_EQ(EpochPermutation(500, 1, 3, 0), EpochPermutation(500, 1, 3, 0));
  EXPECT_NE(EpochPermutation(500, 1, 3, 0), EpochPermutation(500, 2, 3, 0));
  EXPECT_NE(EpochPermutation(500, 1, 3, 0), EpochPermutation(500, 1, 3, 1));
}

}  // namespace
}  // namespace ct
