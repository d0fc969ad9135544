// Which rows each rank owns and in which order it visits them. Pure functions, no I/O.
//
// Static sharding: rank r owns the contiguous rows [N*r/W, N*(r+1)/W). Every rank runs
// StepsPerEpoch steps, so the collectives inside a step always match; the few rows beyond
// steps*batch on a rank are skipped in that epoch, and a new permutation each epoch means
// every row is used over epochs.
#pragma once

#include <cstdint>
#include <vector>

namespace ct {

struct RowRange {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t Size() const { return end - begin; }
};

RowRange RankSlice(int64_t rows, int world_size, int rank);

// Steps every rank can run with full batches: floor(smallest slice / batch).
int64_t StepsPerEpoch(int64_t rows, int world_size, int64_t batch);

// A permutation of [0, n) determined by (seed, epoch, rank): Fisher-Yates on SplitMix64.
std::vector<int64_t> EpochPermutation(int64_t n, uint64_t seed, int64_t epoch, int rank);

}  // namespace ct
