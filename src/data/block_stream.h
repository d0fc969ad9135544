// Block sharding: this rank's blocks of rows streamed from the file by a background reader
// thread, for training data larger than memory (data/sharding.h says which blocks).
//
// Protocol (two threads, one mutex):
//   1. StartEpoch(e, first) bumps the generation, drops batches left from the previous epoch
//      and asks the reader for epoch e from batch `first`.
//   2. The reader reads the epoch's windows of blocks (a whole block per HDF5 read), shuffles
//      each window's rows, gathers them into batches (pinned memory when training on CUDA),
//      checking each row for NaN/Inf as it copies it, and queues at most data.prefetch of them,
//      waiting while the queue is full. While training runs it is the only thread that calls
//      HDF5 (not a thread-safe build), and it calls no MPI: it opens the files with HDF5's POSIX
//      driver, as its blocks are its alone; a few stay open (kOpenFiles), so that a bank of
//      hundreds of files is not hundreds of handles.
//   3. Next() takes a batch, waiting if the reader is behind (the data stall the metrics
//      report), and copies it to the device (asynchronously from pinned memory on CUDA).
//   4. A reader error (a file vanished, was truncated or replaced, or a read failed) is
//      stored and thrown by the next Next() on the training thread.
#pragma once

#include <c10/core/Device.h>

#include <memory>
#include <string>
#include <thread>

#include "data/dataset_files.h"
#include "data/dataset_schema.h"
#include "data/sharding.h"
#include "data/train_batches.h"

namespace ct {

struct BlockStreamOptions {
  DatasetFiles files;    // blocks are global rows: a block may span two files
  DatasetSchema schema;  // of the rows trained on (files.schema less a validation tail)
  int64_t block_rows = 1;
  int64_t window_blocks = 16;
  int64_t prefetch = 4;  // batches
  int64_t batch = 1;     // rows per batch
  uint64_t seed = 0;
  int world_size = 1;
  int rank = 0;
  c10::Device device = c10::Device(c10::kCPU);
};

class BlockStream : public TrainBatches {
 public:
  explicit BlockStream(BlockStreamOptions options);
  ~BlockStream() override;
  BlockStream(const BlockStream&) = delete;
  BlockStream& operator=(const BlockStream&) = delete;

  int64_t TotalRows() const override { return options_.schema.Rows(); }
  std::vector<FieldDims> Fields() const override;
  int64_t BatchesPerEpoch() const override { return batches_; }
  std::string Describe() const override;
  void StartEpoch(int64_t epoch, int64_t first_batch) override;
  Batch Next() override;

  struct Shared;  // state shared with the reader thread (block_stream.cpp)

 private:
  BlockStreamOptions options_;
  int64_t batches_ = 0;
  std::shared_ptr<Shared> shared_;
  std::thread reader_;
};

// Rows per block for data.block_rows=auto: ChooseBlockRows on the widest field's chunks (ChunkRowsFor's
// 2 MiB for a contiguous dataset).
int64_t AutoBlockRows(const DatasetSchema& schema, int world_size);

}  // namespace ct
