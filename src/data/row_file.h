// The seam the loaders read rows through: a file of datasets whose first dimension is the row
// (data/shard_loader.h reads a rank's slice collectively, data/block_stream.h reads blocks from a
// background thread). ParallelH5File (data/h5_file.h) implements it; a new format, or a test
// double, implements RowFile and is returned by OpenRowFile.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/row_space.h"

namespace at {
class Tensor;
}

namespace ct {

struct DatasetSchema;

class RowFile {
 public:
  virtual ~RowFile() = default;
  virtual const std::string& Path() const = 0;
  // Rows [start, start + count) of `dataset` into `out` (count x the row's values, float32).
  // Collective over the file's communicator when it has one: every rank calls it alike.
  virtual void ReadRows(const std::string& dataset, int64_t start, int64_t count, float* out) const = 0;
  // Whether `dataset` must be read by each rank on its own (HDF5's virtual datasets cannot be
  // read collectively).
  virtual bool ReadsAlone(const std::string& dataset) const = 0;
  // After collective reads: 0, or bits saying why some fell back to independent I/O (HDF5's
  // H5D_MPIO_* causes), for a warning.
  virtual uint32_t CollectiveFallbackCause() const = 0;
};

// Opens `path` for reading: collectively over `comm`, or by this process alone (MPI_COMM_NULL:
// no MPI call, for a reader thread).
std::unique_ptr<RowFile> OpenRowFile(const std::string& path, MPI_Comm comm);

// Reads `piece` of its file into every field's rows (`rows[i]` for schema.fields[i], [rows, ...]
// float32) from their row `at`: one read per field.
void ReadPiece(const RowFile& file, const DatasetSchema& schema, const FilePiece& piece, int64_t at,
               const std::vector<at::Tensor>& rows);

}  // namespace ct
