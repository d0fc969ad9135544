// This rank's rows of a dataset file, held in memory on the training device, served as
// shuffled batches without per-sample I/O and without host synchronisation.
#pragma once

#include <ATen/ATen.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "data/batch.h"
#include "data/dataset_files.h"
#include "data/sharding.h"
#include "data/train_batches.h"

namespace ct {

class ShardLoader {
 public:
  // Collective: reads this rank's contiguous slice of the rows of `files` (one after another,
  // a slice may span files) with whole-slab collective reads, opening the files it lies in one
  // at a time, each together with the other ranks that read from it: of all rows, or of the
  // part that data.val_fraction (`val_fraction`) sets aside or leaves for training
  // (data/sharding.h).
  static ShardLoader Load(const DatasetFiles& files, MPI_Comm comm, const c10::Device& device, double val_fraction = 0,
                          FilePart part = FilePart::kAll);
  // One file (benchmarks, tests).
  static ShardLoader Load(const std::string& path, const std::vector<DataField>& fields, MPI_Comm comm,
                          const c10::Device& device);

  // rows: every field's rows, [rows on this rank, ...] each.
  ShardLoader(Batch rows, int64_t total_rows);

  int64_t Rows() const { return rows_.Rows(); }      // rows on this rank
  int64_t TotalRows() const { return total_rows_; }  // rows over all ranks
  std::vector<FieldDims> Fields() const;
  int64_t Bytes() const;

  // Draws this epoch's order of local rows (same seed on every rank, mixed with the rank).
  void Shuffle(uint64_t seed, int64_t epoch, int rank);

  // The step-th batch of `batch` rows in the current order. Shuffle() first.
  Batch ShuffledBatch(int64_t step, int64_t batch) const;

  // Rows [begin, begin+count) in file order (validation).
  Batch Rows(int64_t begin, int64_t count) const;

 private:
  Batch rows_;
  at::Tensor order_;  // [Rows()] int64, on the device
  int64_t total_rows_ = 0;
};

// Static sharding as a batch source: this rank's rows in memory, reshuffled every epoch.
class StaticBatches : public TrainBatches {
 public:
  // replicated: `rows` are all rows (on every rank); each epoch's permutation is the same on
  // every rank, and rank r takes rows [(s W + r) B, (s W + r + 1) B) of it for step s: the
  // global batches do not depend on the world size W (data.sharding=replicated).
  StaticBatches(ShardLoader rows, int64_t batch, uint64_t seed, int world_size, int rank, bool replicated = false);
  int64_t TotalRows() const override { return rows_.TotalRows(); }
  std::vector<FieldDims> Fields() const override { return rows_.Fields(); }
  int64_t BatchesPerEpoch() const override { return batches_; }
  std::string Describe() const override;
  void StartEpoch(int64_t epoch, int64_t first_batch) override;
  Batch Next() override;

 private:
  ShardLoader rows_;
  int64_t batch_;
  uint64_t seed_;
  int rank_;
  int world_size_;
  bool replicated_;
  int64_t batches_;
  int64_t next_ = 0;
};

}  // namespace ct
