// Parallel HDF5 files of rows: open collectively with MPI-IO and move whole slabs of rows
// with collective hyperslab transfers. A row is one sample: dataset shape [N, ...].
//
// Collective protocol: every rank calls each function here the same number of times, in the
// same order. With comm == MPI_COMM_NULL the file is this process's alone: HDF5's POSIX driver,
// independent transfers, no MPI call (for a background reader thread, which must not call MPI
// while the training thread does). Transfers are split into pieces (kMaxPieceBytes,
// kStagedPieceBytes, kConvertPieceBytes); the number of pieces is agreed over all ranks (a rank
// with fewer rows takes part with an empty selection).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "data/h5_check.h"
#include "data/row_file.h"

namespace ct {

struct RowShape {
  std::vector<int64_t> dims;      // [N, ...]
  std::string dtype = "float32";  // as stored in the file (rows are float32 once read)
  int64_t Rows() const { return dims.empty() ? 0 : dims[0]; }
  int64_t RowElements() const;                        // product of dims[1:]
  std::vector<int64_t> WithRows(int64_t rows) const;  // dims with dims[0] = rows
  std::string Str() const;                            // "[16384, 1024]"
};

// Rows per chunk so that a chunk holds about 2 MiB (clamped to [1, rows]).
int64_t ChunkRowsFor(int64_t row_bytes, int64_t rows);

class ParallelH5File : public RowFile {
 public:
  enum class Mode { kRead, kCreate };
  // Collective over comm. kCreate truncates `path`.
  ParallelH5File(const std::string& path, Mode mode, MPI_Comm comm);
  ~ParallelH5File() override;
  ParallelH5File(ParallelH5File&&) = default;
  ParallelH5File& operator=(ParallelH5File&&) = default;

  const std::string& Path() const override { return path_; }

  // MPI-IO hints (data.mpi_hints) for every collective open from now on, in this process.
  static void SetMpiIoHints(const std::map<std::string, std::string>& hints);

  // Checks that `name` is a dataset of numbers (float16/32/64 or integers) with at least one
  // dimension and at least one value per row; returns its shape and stored type.
  RowShape FloatRows(const std::string& name) const;

  // Collective: rows [start, start+count) of `name` into `out` (count * RowElements floats), converted
  // to float32 in memory from other stored types, so that the reads stay collective.
  void ReadRows(const std::string& name, int64_t start, int64_t count, float* out) const override;

  bool HasDataset(const std::string& name) const;

  // A virtual dataset (VDS): rows mapped from other datasets, possibly in other files.
  bool IsVirtual(const std::string& name) const;
  // The source files a virtual dataset maps rows from that cannot be found where HDF5 looks
  // (HDF5 would read their rows as zeros, silently).
  std::vector<std::string> MissingVirtualSources(const std::string& name) const;

  // Rows per chunk of `name`, or 0 if it is not chunked.
  int64_t ChunkRows(const std::string& name) const;

  // After collective reads: 0 if every transfer was collective, else HDF5's H5D_MPIO_* cause
  // bits of the last one that fell back to independent I/O (e.g. a type conversion).
  uint32_t CollectiveFallbackCause() const override { return independent_fallback_; }
  bool ReadsAlone(const std::string& name) const override { return IsVirtual(name); }

  // Collective: creates a chunked float32 dataset [rows, row_elements...].
  void CreateFloatRows(const std::string& name, const std::vector<int64_t>& dims);

  // Collective: writes rows [start, start+count) of `name`, produced piece by piece by
  // fill(first_row, rows, buffer) so memory stays bounded whatever the slice size.
  using Fill = std::function<void(int64_t first_row, int64_t rows, float* buffer)>;
  void WriteRows(const std::string& name, int64_t start, int64_t count, const Fill& fill);

  // Collective: a string attribute on the root group.
  void WriteAttribute(const std::string& name, const std::string& value);

  // Collective: closes the file, or fails with a DataError where HDF5 cannot (its last writes, the
  // metadata and the file's size, happen here). Writers call it before their file is renamed into
  // place; the destructor closes a file without checking.
  void Close();

  // Pieces read straight into the caller's memory; pieces that pass through a buffer of their
  // own (WriteRows, convert's verify) are smaller, so that memory stays small as well as bounded.
  static constexpr int64_t kMaxPieceBytes = int64_t{256} << 20;
  static constexpr int64_t kStagedPieceBytes = int64_t{32} << 20;
  // Rows read in another type than float32 pass through a buffer this size (in float32 bytes)
  // that stays in the CPU's cache while they are converted: 32 MiB pieces ran float64 loads at
  // 53% of float32's MB/s, 2 MiB ones at 72% (bench/io.sh).
  static constexpr int64_t kConvertPieceBytes = int64_t{2} << 20;

 private:
  H5Id OpenDataset(const std::string& name) const;
  void NoteCollectiveCause(hid_t dxpl) const;

  // ReadRows' dataset, opened once: a virtual dataset keeps its source files open meanwhile.
  hid_t ReadDataset(const std::string& name) const;

  std::string path_;
  MPI_Comm comm_;
  bool writing_;  // created by this process (Mode::kCreate)
  H5Id file_;
  mutable uint32_t independent_fallback_ = 0;
  // After file_, so closed before it (a file opened with MPI-IO closes only without open objects).
  mutable std::map<std::string, H5Id> read_datasets_;
  mutable std::vector<unsigned char> staging_;  // ReadRows' buffer for other types than float32, reused
};

}  // namespace ct
