#include "data/synthetic_writer.h"

#include <vector>

#include "cluster/mpi_check.h"
#include "data/h5_file.h"
#include "data/sharding.h"
#include "util/atomic_file.h"
#include "util/unfinished_file.h"

namespace ct {

void WriteChirpDataset(const std::string& path, int64_t rows, const ChirpOptions& options, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_CHECK(MPI_Comm_size(comm, &size));
  const std::string tmp = TemporaryPathFor(path);
  const UnfinishedFile unfinished(tmp);  // until renamed: a stop signal removes it
  // Every rank closes the file before it is renamed; a failed write leaves nothing behind.
  WriteTemporaryOrRemoveIt("make-data", path, rank == 0, [&] {
    ParallelH5File file(tmp, ParallelH5File::Mode::kCreate, comm);
    file.CreateFloatRows("input", {rows, options.length});
    file.CreateFloatRows("target", {rows, options.length});
    file.CreateFloatRows("params", {rows, kChirpParams});
    file.WriteAttribute("generator", "clustertrain make-data (synthetic chirps)");
    file.WriteAttribute("parameters", "length=" + std::to_string(options.length) + " noise_std=" +
                                          std::to_string(options.noise_std) + " seed=" + std::to_string(options.seed));
    file.WriteAttribute("params_columns", kChirpParamNames);
    const RowRange slice = RankSlice(rows, size, rank);
    // One generator call makes a row's noisy and clean versions and its parameters; each
    // dataset's pass regenerates its rows (cheap next to the write) so memory stays one piece,
    // not a slice.
    enum class Part { kNoisy, kClean, kParams };
    std::vector<float> noisy(static_cast<size_t>(options.length)), clean(noisy.size()), params(kChirpParams);
    auto fill = [&](Part part) {
      return [&, part](int64_t first, int64_t n, float* buffer) {
        const int64_t width = part == Part::kParams ? kChirpParams : options.length;
        for (int64_t r = 0; r < n; ++r) {
          float* row = buffer + r * width;
          ChirpRow(options, first + r, part == Part::kNoisy ? row : noisy.data(),
                   part == Part::kClean ? row : clean.data(), part == Part::kParams ? row : params.data());
        }
      };
    };
    file.WriteRows("input", slice.begin, slice.Size(), fill(Part::kNoisy));
    file.WriteRows("target", slice.begin, slice.Size(), fill(Part::kClean));
    file.WriteRows("params", slice.begin, slice.Size(), fill(Part::kParams));
    file.Close();
  });
  MPI_CHECK(MPI_Barrier(comm));
  if (rank == 0) CommitTemporaryFile(path);
  MPI_CHECK(MPI_Barrier(comm));
}

}  // namespace ct
