#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "data/row_space.h"
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

TEST(Sharding, EveryRowIsUsedOverEpochs) {
  for (int world : {1, 2, 3, 4, 7}) {
    const int64_t rows = 1001, batch = 16;
    const int64_t steps = StepsPerEpoch(rows, world, batch);
    std::set<int64_t> used;
    for (int64_t epoch = 0; epoch < 30; ++epoch) {
      for (int r = 0; r < world; ++r) {
        const RowRange slice = RankSlice(rows, world, r);
        const std::vector<int64_t> order = EpochPermutation(slice.Size(), 5, epoch, r);
        for (int64_t i = 0; i < steps * batch; ++i) used.insert(slice.begin + order[static_cast<size_t>(i)]);
      }
    }
    EXPECT_EQ(static_cast<int64_t>(used.size()), rows) << "world " << world;
  }
}

TEST(Sharding, OrderDependsOnSeedAndIsReproducible) {
  EXPECT_EQ(EpochPermutation(500, 1, 3, 0), EpochPermutation(500, 1, 3, 0));
  EXPECT_NE(EpochPermutation(500, 1, 3, 0), EpochPermutation(500, 2, 3, 0));
  EXPECT_NE(EpochPermutation(500, 1, 3, 0), EpochPermutation(500, 1, 3, 1));
}

// Block sharding, exhaustively over world sizes, awkward row counts, block sizes, windows and
// batches: in every epoch the ranks' rows are disjoint, their union is every row, each rank can
// fill the same number of steps, and another epoch visits rows in another order.
TEST(BlockSharding, RanksCoverEveryRowOnceAndRunTheSameSteps) {
  for (int world : {1, 2, 3, 4, 7}) {
    for (int64_t rows : {7, 64, 97, 1000, 1023}) {
      for (int64_t block_rows : {1, 3, 16, 64}) {
        const BlockPlan plan{rows, block_rows};
        for (int64_t window : {1, 4}) {
          std::vector<std::vector<int64_t>> epoch0(static_cast<size_t>(world));
          for (int64_t epoch = 0; epoch < 2; ++epoch) {
            std::vector<int> seen(static_cast<size_t>(rows), 0);
            int64_t fewest = rows;
            for (int r = 0; r < world; ++r) {
              const std::vector<int64_t> order = EpochBlockRowOrder(plan, world, r, 7, epoch, window);
              for (int64_t row : order) {
                ASSERT_GE(row, 0);
                ASSERT_LT(row, rows);
                ++seen[static_cast<size_t>(row)];
              }
              fewest = std::min<int64_t>(fewest, static_cast<int64_t>(order.size()));
              if (epoch == 0) epoch0[static_cast<size_t>(r)] = order;
              if (epoch == 1 && order.size() > 2) {
                EXPECT_NE(order, epoch0[static_cast<size_t>(r)]) << world << " " << rows << " " << block_rows;
              }
            }
            for (int64_t row = 0; row < rows; ++row) {
              ASSERT_EQ(seen[static_cast<size_t>(row)], 1)
                  << "row " << row << " world " << world << " rows " << rows << " block_rows " << block_rows;
            }
            EXPECT_GE(fewest, GuaranteedBlockRows(plan, world));
            for (int64_t batch : {1, 5, 16}) {
              const int64_t steps = BlockStepsPerEpoch(plan, world, batch);
              EXPECT_LE(steps * batch, fewest);
            }
          }
        }
      }
    }
  }
}

// The guarantee is tight: some permutation gives a rank exactly that many rows, so the steps
// cannot be raised without a rank running short in some epoch.
TEST(BlockSharding, GuaranteedRowsAreTight) {
  for (int world : {1, 2, 3, 4, 7}) {
    for (int64_t rows : {64, 97, 1000, 1023}) {
      for (int64_t block_rows : {3, 16, 64}) {
        const BlockPlan plan{rows, block_rows};
        const int64_t full = plan.NumBlocks() / world;
        if (full == 0) {
          EXPECT_EQ(GuaranteedBlockRows(plan, world), 0);
          continue;
        }
        const int64_t last = plan.Block(plan.NumBlocks() - 1).Size();
        EXPECT_EQ(GuaranteedBlockRows(plan, world), (full - 1) * block_rows + last);
      }
    }
  }
}

// data.block_rows=auto: whole chunks; at least 1 MiB when the file has chunks to spare; and for a
// small file, blocks small enough that an epoch still trains on at least 90% of the rows.
TEST(BlockSharding, AutoBlockRowsAreWholeChunksAndKeepEpochsNearlyWhole) {
  constexpr int64_t kMiB = int64_t{1} << 20;
  // The demo file: 2 MiB chunks of 256 rows of 8 KiB, 64 chunks: one chunk a block.
  EXPECT_EQ(ChooseBlockRows(16384, 8192, 256, 2), 256);
  // A large file of small chunks: chunks grouped to 1 MiB.
  EXPECT_EQ(ChooseBlockRows(int64_t{1} << 24, 4096, 16, 8), 256);
  // h5py's one-row chunks in a small file: limited by the blocks every rank needs.
  EXPECT_EQ(ChooseBlockRows(3000, 1024, 1, 2), 3000 / (2 * kMinBlocksPerRank));
  for (int world : {1, 2, 3, 4, 7, 64}) {
    for (int64_t rows : {4096, 3000, 100000, 1 << 22}) {
      for (int64_t chunk_rows : {1, 7, 64, 512}) {
        for (int64_t row_bytes : {int64_t{4}, int64_t{4096}, int64_t{32768}}) {
          const int64_t block_rows = ChooseBlockRows(rows, row_bytes, chunk_rows, world);
          const std::string where = "world " + std::to_string(world) + " rows " + std::to_string(rows) + " chunk " +
                                    std::to_string(chunk_rows) + " row bytes " + std::to_string(row_bytes);
          ASSERT_GE(block_rows, 1) << where;
          if (block_rows < rows) {
            EXPECT_EQ(block_rows % chunk_rows, 0) << where;
          }
          const int64_t chunks = (rows + chunk_rows - 1) / chunk_rows;
          if (chunks >= world * kMinBlocksPerRank * (kMiB / row_bytes + 1)) {
            EXPECT_GE(block_rows * row_bytes, kMiB) << where;
          }
          if (chunks >= world * kMinBlocksPerRank) {
            const double used = static_cast<double>(GuaranteedBlockRows(BlockPlan{rows, block_rows}, world) * world);
            EXPECT_GE(used / static_cast<double>(rows), 0.9) << where;
          }
        }
      }
    }
  }
}

// Every row is trained on over epochs: the rows beyond steps*batch differ from epoch to epoch.
TEST(BlockSharding, EveryRowIsUsedOverEpochs) {
  for (int world : {1, 2, 3, 4, 7}) {
    const BlockPlan plan{1023, 16};
    const int64_t batch = 8;
    const int64_t steps = BlockStepsPerEpoch(plan, world, batch);
    std::set<int64_t> used;
    for (int64_t epoch = 0; epoch < 40; ++epoch) {
      for (int r = 0; r < world; ++r) {
        const std::vector<int64_t> order = EpochBlockRowOrder(plan, world, r, 3, epoch, 4);
        used.insert(order.begin(), order.begin() + steps * batch);
      }
    }
    EXPECT_EQ(static_cast<int64_t>(used.size()), plan.rows) << "world " << world;
  }
}

TEST(BlockSharding, WindowsShuffleRowsAcrossTheirBlocks) {
  const BlockPlan plan{4096, 64};
  const std::vector<int64_t> order = EpochBlockRowOrder(plan, 1, 0, 11, 0, 8);
  // The first 64 rows visited come from more than one block (the window mixes 8 blocks).
  std::set<int64_t> blocks;
  for (int i = 0; i < 64; ++i) blocks.insert(order[static_cast<size_t>(i)] / 64);
  EXPECT_GT(blocks.size(), 4u);
  // With a window of one block, they all come from one.
  const std::vector<int64_t> unmixed = EpochBlockRowOrder(plan, 1, 0, 11, 0, 1);
  blocks.clear();
  for (int i = 0; i < 64; ++i) blocks.insert(unmixed[static_cast<size_t>(i)] / 64);
  EXPECT_EQ(blocks.size(), 1u);
}

}  // namespace
}  // namespace ct

namespace ct {
namespace {

// data.val_fraction: a fixed tail of the file is validation, the head training; they never
// overlap, together cover the file, and do not depend on the world size.
TEST(ValidationSplit, TheTailIsHeldOutAndTheHeadTrains) {
  EXPECT_EQ(ValidationRows(16384, 0.1), 1638);
  EXPECT_EQ(ValidationRows(5, 0.01), 1);  // at least one row
  EXPECT_EQ(ValidationRows(100, 0), 0);
  for (const int64_t rows : {7, 100, 999, 16384}) {
    for (const double fraction : {0.05, 0.1, 0.25, 0.5}) {
      const RowRange head = PartOf(rows, fraction, FilePart::kTrainingHead);
      const RowRange tail = PartOf(rows, fraction, FilePart::kValidationTail);
      EXPECT_EQ(head.begin, 0);
      EXPECT_EQ(head.end, tail.begin);
      EXPECT_EQ(tail.end, rows);
      EXPECT_EQ(tail.Size(), ValidationRows(rows, fraction));
    }
  }
  const RowRange all = PartOf(100, 0.25, FilePart::kAll);
  EXPECT_EQ(all.begin, 0);
  EXPECT_EQ(all.end, 100);
}

// Global rows over files of 3, 0 (empty), 1 and 4 rows.
TEST(RowSpace, SplitsARangeOfGlobalRowsIntoPiecesOfFiles) {
  const RowSpace space({3, 0, 1, 4});
  EXPECT_EQ(space.Rows(), 8);
  EXPECT_EQ(space.Files(), 4u);
  auto text = [&](RowRange range) {
    std::string out;
    for (const FilePiece& p : space.Pieces(range)) {
      out += std::to_string(p.file) + ":" + std::to_string(p.file_row) + "+" + std::to_string(p.rows) + " ";
    }
    return out;
  };
  EXPECT_EQ(text({0, 8}), "0:0+3 2:0+1 3:0+4 ");
  EXPECT_EQ(text({2, 5}), "0:2+1 2:0+1 3:0+1 ");
  EXPECT_EQ(text({4, 6}), "3:0+2 ");
  EXPECT_EQ(text({5, 5}), "");
  EXPECT_EQ(space.Locate(3).file, 2u);  // not the empty file 1
  EXPECT_EQ(space.Locate(7).file, 3u);
  EXPECT_EQ(space.Locate(7).file_row, 3);
}

}  // namespace
}  // namespace ct
