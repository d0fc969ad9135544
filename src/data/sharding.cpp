#include "data/sharding.h"

#include <numeric>
#include <utility>

#include "util/random.h"

namespace ct {

RowRange RankSlice(int64_t rows, int world_size, int rank) {
  // 128-bit-safe enough: rows < 2^40 and world < 2^20 in any real run.
  return {rows * rank / world_size, rows * (rank + 1) / world_size};
}

int64_t StepsPerEpoch(int64_t rows, int world_size, int64_t batch) {
  return (rows / world_size) / batch;
}

std::vector<int64_t> EpochPermutation(int64_t n, uint64_t seed, int64_t epoch, int rank) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  SplitMix64 rng(MixSeed(seed, static_cast<uint64_t>(epoch) + 1, static_cast<uint64_t>(rank) + 1));
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(i) + 1));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

}  // namespace ct
