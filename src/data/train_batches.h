// Where training batches come from. Two sources behind one interface, chosen by data.sharding:
// a rank's rows held in memory (static, data/shard_loader.h) or streamed block by block from
// the file by a background reader (blocks, data/block_stream.h). The trainer sees only this.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/batch.h"

namespace ct {

class TrainBatches {
 public:
  virtual ~TrainBatches() = default;

  virtual int64_t TotalRows() const = 0;              // rows in the file, over all ranks
  virtual std::vector<FieldDims> Fields() const = 0;  // one row's shape per field, e.g. input {L}
  // Batches every rank serves per epoch: the same on every rank, so collectives always match.
  virtual int64_t BatchesPerEpoch() const = 0;
  // "static: 8192 rows in memory" / "blocks of 512 rows, ...": for the start-up log.
  virtual std::string Describe() const = 0;

  // Starts epoch `epoch` at its batch `first_batch` (> 0 when resuming inside an epoch).
  virtual void StartEpoch(int64_t epoch, int64_t first_batch) = 0;
  // The next batch of the epoch, on the training device. Throws DataError if reading failed.
  virtual Batch Next() = 0;
};

}  // namespace ct
