#include "data/sharding.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "util/random.h"

namespace ct {
namespace {

// Fisher-Yates on a generator seeded by `seed`.
std::vector<int64_t> Permutation(int64_t n, uint64_t seed) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  SplitMix64 rng(seed);
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(i) + 1));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

}  // namespace

int64_t ValidationRows(int64_t rows, double fraction) {
  if (fraction <= 0) return 0;
  return std::max<int64_t>(1, std::llround(static_cast<double>(rows) * fraction));
}

RowRange PartOf(int64_t rows, double val_fraction, FilePart part) {
  const int64_t held_out = ValidationRows(rows, val_fraction);
  switch (part) {
    case FilePart::kTrainingHead:
      return {0, rows - held_out};
    case FilePart::kValidationTail:
      return {rows - held_out, rows};
    case FilePart::kAll:
      break;
  }
  return {0, rows};
}

RowRange RankSlice(int64_t rows, int world_size, int rank) {
  // 128-bit-safe enough: rows < 2^40 and world < 2^20 in any real run.
  return {rows * rank / world_size, rows * (rank + 1) / world_size};
}

int64_t StepsPerEpoch(int64_t rows, int world_size, int64_t batch) { return (rows / world_size) / batch; }

std::vector<int64_t> EpochPermutation(int64_t n, uint64_t seed, int64_t epoch, int rank) {
  return Permutation(n, MixSeed(seed, static_cast<uint64_t>(epoch) + 1, static_cast<uint64_t>(rank) + 1));
}

RowRange BlockPlan::Block(int64_t b) const { return {b * block_rows, std::min(rows, (b + 1) * block_rows)}; }

std::vector<int64_t> EpochBlocks(const BlockPlan& plan, int world_size, int rank, uint64_t seed, int64_t epoch) {
  // rank 0 in the mix for everyone: the block permutation is shared, so the ranks' blocks are disjoint.
  const std::vector<int64_t> all =
      Permutation(plan.NumBlocks(), MixSeed(seed ^ 0xB10C5ull, static_cast<uint64_t>(epoch) + 1, 0));
  std::vector<int64_t> mine;
  for (size_t i = static_cast<size_t>(rank); i < all.size(); i += static_cast<size_t>(world_size)) {
    mine.push_back(all[i]);
  }
  return mine;
}

int64_t GuaranteedBlockRows(const BlockPlan& plan, int world_size) {
  const int64_t blocks = plan.NumBlocks() / world_size;
  if (blocks == 0) return 0;
  const int64_t short_by = plan.NumBlocks() * plan.block_rows - plan.rows;  // the last block's missing rows
  return blocks * plan.block_rows - short_by;
}

int64_t BlockStepsPerEpoch(const BlockPlan& plan, int world_size, int64_t batch) {
  return GuaranteedBlockRows(plan, world_size) / batch;
}

int64_t ChooseBlockRows(int64_t rows, int64_t row_bytes, int64_t chunk_rows, int world_size) {
  constexpr int64_t kMinBlockBytes = int64_t{1} << 20;
  chunk_rows = std::clamp<int64_t>(chunk_rows, 1, std::max<int64_t>(rows, 1));
  const int64_t chunk_bytes = chunk_rows * row_bytes;
  const int64_t chunks_for_size = std::max<int64_t>(1, (kMinBlockBytes + chunk_bytes - 1) / chunk_bytes);
  const int64_t chunks = (rows + chunk_rows - 1) / chunk_rows;
  const int64_t chunks_for_balance = std::max<int64_t>(1, chunks / (int64_t{world_size} * kMinBlocksPerRank));
  return std::min(rows, std::min(chunks_for_size, chunks_for_balance) * chunk_rows);
}

std::vector<int64_t> WindowPermutation(int64_t n, uint64_t seed, int64_t epoch, int rank, int64_t window) {
  return Permutation(n, MixSeed(seed ^ 0x3A1D0ull, static_cast<uint64_t>(epoch) + 1,
                                (static_cast<uint64_t>(rank) << 32) + static_cast<uint64_t>(window)));
}

std::vector<int64_t> EpochBlockRowOrder(const BlockPlan& plan, int world_size, int rank, uint64_t seed, int64_t epoch,
                                        int64_t window_blocks) {
  const std::vector<int64_t> blocks = EpochBlocks(plan, world_size, rank, seed, epoch);
  std::vector<int64_t> order;
  for (size_t first = 0, window = 0; first < blocks.size(); first += static_cast<size_t>(window_blocks), ++window) {
    std::vector<int64_t> rows;  // the window's rows, block after block
    for (size_t i = first; i < std::min(blocks.size(), first + static_cast<size_t>(window_blocks)); ++i) {
      const RowRange block = plan.Block(blocks[i]);
      for (int64_t row = block.begin; row < block.end; ++row) rows.push_back(row);
    }
    for (int64_t i :
         WindowPermutation(static_cast<int64_t>(rows.size()), seed, epoch, rank, static_cast<int64_t>(window))) {
      order.push_back(rows[static_cast<size_t>(i)]);
    }
  }
  return order;
}

}  // namespace ct
