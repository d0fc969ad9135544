// Which rows each rank owns and in which order it visits them. Pure functions, no I/O.
//
// Static sharding: rank r owns the contiguous rows [N*r/W, N*(r+1)/W). Every rank runs
// StepsPerEpoch steps, so the collectives inside a step always match; the few rows beyond
// steps*batch on a rank are skipped in that epoch, and a new permutation each epoch means
// every row is used over epochs.
//
// Block sharding (data larger than memory): rows are grouped in blocks of block_rows
// consecutive rows (the last block may be shorter). Each epoch the blocks are permuted with a
// seed shared by all ranks and rank r takes blocks perm[r], perm[r+W], perm[r+2W], ... It visits
// them in windows of `window_blocks` blocks; the rows of a window are shuffled together. Every
// rank runs BlockStepsPerEpoch steps: what the rank with the fewest rows can fill, whatever the
// permutation.
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

// data.val_fraction: the validation rows of a file of `rows` rows are its last
// max(1, round(rows x fraction)) rows; training uses the rows before them. A fixed tail, so the
// split is the same on every rank, for any world size and after a resume. (A file sorted by
// some parameter puts the tail at one end of it: shuffle such a file, or give data.val.)
int64_t ValidationRows(int64_t rows, double fraction);

// Which rows of a file a loader reads: all, the training head or the validation tail.
enum class FilePart { kAll, kTrainingHead, kValidationTail };
RowRange PartOf(int64_t rows, double val_fraction, FilePart part);

// Steps every rank can run with full batches: floor(smallest slice / batch).
int64_t StepsPerEpoch(int64_t rows, int world_size, int64_t batch);

// A permutation of [0, n) determined by (seed, epoch, rank): Fisher-Yates on SplitMix64.
std::vector<int64_t> EpochPermutation(int64_t n, uint64_t seed, int64_t epoch, int rank);

struct BlockPlan {
  int64_t rows = 0;        // N
  int64_t block_rows = 1;  // rows per block (the last one may be shorter)
  int64_t NumBlocks() const { return (rows + block_rows - 1) / block_rows; }
  RowRange Block(int64_t b) const;
};

// This rank's blocks in an epoch, in visiting order: every W-th block of a permutation that is
// the same on every rank.
std::vector<int64_t> EpochBlocks(const BlockPlan& plan, int world_size, int rank, uint64_t seed, int64_t epoch);

// Rows every rank is sure to get in any epoch: floor(blocks / W) blocks, one of which may be
// the short last one.
int64_t GuaranteedBlockRows(const BlockPlan& plan, int world_size);
int64_t BlockStepsPerEpoch(const BlockPlan& plan, int world_size, int64_t batch);

// Rows per block for data.block_rows=auto: whole chunks (a block read never splits a chunk),
// enough of them for a block of at least 1 MiB (fewer, larger reads), but no more than leaves
// every rank kMinBlocksPerRank blocks when the file has that many chunks: an epoch skips up to
// about a block per rank, which must stay a small part of the rows.
constexpr int64_t kMinBlocksPerRank = 32;
int64_t ChooseBlockRows(int64_t rows, int64_t row_bytes, int64_t chunk_rows, int world_size);

// The order in which rows of one window (`n` rows, its blocks' rows concatenated) are visited.
std::vector<int64_t> WindowPermutation(int64_t n, uint64_t seed, int64_t epoch, int rank, int64_t window);

// Every row this rank visits in an epoch, in order (global row indices): what the block loader
// serves, as one list. For tests and benchmarks; the loader streams it window by window.
std::vector<int64_t> EpochBlockRowOrder(const BlockPlan& plan, int world_size, int rank, uint64_t seed, int64_t epoch,
                                        int64_t window_blocks);

}  // namespace ct
